// Package appsbrowser holds only tests: MCP Apps views rendered in a real
// browser (headless Chromium driven through the DevTools protocol with
// chromedp), behind a minimal host page built on the ext-apps reference
// host bridge and a sandbox proxy on a second origin. It is a nested
// module so that chromedp stays out of the core go.mod.
package appsbrowser
