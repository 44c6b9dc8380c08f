package mcp

// HostNameForTest exposes hostName to the external tests.
var HostNameForTest = hostName
