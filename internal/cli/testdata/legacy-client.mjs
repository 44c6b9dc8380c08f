// A legacy (2025-11-25) MCP client built on the official TypeScript SDK 1.x,
// driven by internal/cli/legacy_client_test.go. It connects over Streamable HTTP or stdio,
// lists and calls tools, answers the server's elicitation and sampling
// requests, collects log notifications, and prints what it saw as one JSON
// object on stdout.
//
// Usage: node legacy-client.mjs http URL
//        node legacy-client.mjs stdio COMMAND [ARGS...]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
const out = { elicitations: [], samplings: 0, roots: 0, logs: [] };

const client = new Client(
  { name: 'mcpkit-legacy-test', version: '1.0.0' },
  { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  out.elicitations.push(req.params);
  const content = {};
  for (const [name, prop] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
    if (prop.default !== undefined) content[name] = prop.default;
    else if (prop.type === 'string') content[name] = name === 'email' ? 'ts@example.com' : 'ts-' + name;
    else if (prop.type === 'number' || prop.type === 'integer') content[name] = 7;
    else if (prop.type === 'boolean') content[name] = true;
  }
  return { action: 'accept', content };
});
client.setRequestHandler(CreateMessageRequestSchema, async () => {
  out.samplings++;
  return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'ts-model', stopReason: 'endTurn' };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  out.roots++;
  return { roots: [{ uri: 'file:///ts/root', name: 'ts' }] };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { out.logs.push(n.params.data); });

const transport = mode === 'http'
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args: rest, stderr: 'ignore' });

// The client tells the transport the negotiated version; record it.
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { out.protocolVersion = v; setVersion?.(v); };

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

try {
  await client.connect(transport);
  out.server = client.getServerVersion();
  out.sessionId = mode === 'http' ? transport.sessionId ?? null : null;
  out.capabilities = client.getServerCapabilities();
  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => t.name);
  out.echo = text(await client.callTool({ name: 'echo', arguments: { text: 'hello from TypeScript' } }));
  const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
  out.elicitation = { text: text(elicited), isError: elicited.isError ?? false };
  const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } });
  out.sampling = { text: text(sampled), isError: sampled.isError ?? false };
  await client.setLoggingLevel('info');
  await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  out.ping = await client.ping();
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  if (mode === 'http') {
    try { await transport.terminateSession(); out.terminated = true; } catch (e) { out.terminateError = String(e); }
  }
  await client.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
