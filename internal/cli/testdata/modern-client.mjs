// A modern (2026-07-28) MCP client built on the official TypeScript SDK 2.x
// (@modelcontextprotocol/client), driven by internal/cli/modern_client_test.go.
// It connects over Streamable HTTP or stdio pinned to 2026-07-28 (a
// server/discover probe, no initialize), lists tools page by page, calls
// tools, answers the input_required elicitation of a multi round-trip tool,
// reads a resource, gets a prompt, receives progress notifications, and
// listens for tools/list_changed. It prints what it saw as one JSON object
// on stdout.
//
// Usage: node modern-client.mjs http URL
//        node modern-client.mjs stdio COMMAND [ARGS...]
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, target, ...rest] = process.argv.slice(2);
const out = { elicitations: [], progress: [], toolListChanges: 0, pages: 0 };

const client = new Client(
  { name: 'mcpkit-modern-test', version: '1.0.0' },
  {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  },
);
client.setRequestHandler('elicitation/create', async (req) => {
  out.elicitations.push(req.params);
  const content = {};
  for (const [name, prop] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
    if (prop.type === 'string') content[name] = 'ts-' + name;
  }
  return { action: 'accept', content };
});

let changed;
const toolsChanged = new Promise((resolve) => { changed = resolve; });
client.setNotificationHandler('notifications/tools/list_changed', () => {
  out.toolListChanges++;
  changed();
});

out.clientErrors = [];
client.onerror = (e) => out.clientErrors.push(String(e && e.message || e));

const transport = mode === 'http'
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args: rest, stderr: 'ignore' });

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const within = (p, ms, what) => {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out waiting for ' + what)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
};

try {
  await client.connect(transport);
  out.era = client.getProtocolEra();
  out.protocolVersion = client.getNegotiatedProtocolVersion();
  out.server = client.getServerVersion();
  out.supportedVersions = client.getDiscoverResult()?.supportedVersions;
  out.capabilities = client.getServerCapabilities();

  // The aggregated list (the SDK walks every page) and a walk of our own
  // that follows nextCursor, to see the pages themselves.
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.pagedTools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    out.pages++;
    out.pagedTools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor && out.pages < 100);

  out.echo = text(await client.callTool({ name: 'echo', arguments: { text: 'hi' } }));

  const asked = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
  out.elicitation = { text: text(asked), isError: asked.isError ?? false };

  const read = await client.readResource({ uri: 'test://static-text' });
  out.resource = read.contents.map((c) => c.text).join('\n');

  const prompt = await client.getPrompt({ name: 'test_simple_prompt' });
  out.prompt = prompt.messages.map((m) => m.content.type === 'text' ? m.content.text : m.content.type);

  const progressed = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, {
    onprogress: (p) => out.progress.push(p),
  });
  out.progressResult = { text: text(progressed), isError: progressed.isError ?? false };

  const sub = await client.listen({ toolsListChanged: true });
  out.honoredFilter = sub.honoredFilter;
  out.trigger = text(await client.callTool({ name: 'test_trigger_tool_change', arguments: {} }));
  await within(toolsChanged, 10000, 'notifications/tools/list_changed');
  out.toolsAfterChange = (await client.listTools()).tools.map((t) => t.name);
  await sub.close();
  out.subscriptionClosed = await within(sub.closed, 5000, 'the subscription to close');
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
