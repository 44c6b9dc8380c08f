// A modern (2026-07-28) MCP client built on the official TypeScript SDK 2.x
// (@modelcontextprotocol/client), driven by interop/bridge_front_test.go
// against mcpkit's bridge in front of the npm reference server. It connects
// over Streamable HTTP pinned to 2026-07-28 (server/discover, no
// initialize), declares sampling, lists tools, calls echo, and answers the
// sampling of trigger-sampling-request, which the bridge turns into
// input_required (multi round-trip). It prints what it saw as one JSON
// object on stdout.
//
// Usage: node bridge-ts-client.mjs URL
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [target] = process.argv.slice(2);
const out = { samples: [] };

const client = new Client(
  { name: 'mcpkit-bridge-ts-test', version: '1.0.0' },
  {
    capabilities: { sampling: {} },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  },
);
client.setRequestHandler('sampling/createMessage', async (req) => {
  out.samples.push(req.params);
  return { role: 'assistant', model: 'ts-model', content: { type: 'text', text: 'a sampled answer from ts' } };
});

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

try {
  await client.connect(new StreamableHTTPClientTransport(new URL(target)));
  out.era = client.getProtocolEra();
  out.protocolVersion = client.getNegotiatedProtocolVersion();
  out.server = client.getServerVersion();
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.echo = text(await client.callTool({ name: 'echo', arguments: { message: 'hi from ts' } }));
  const sampled = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ts hello' } });
  out.sampling = { text: text(sampled), isError: sampled.isError ?? false };
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
