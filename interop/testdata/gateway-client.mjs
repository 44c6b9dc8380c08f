// A modern (2026-07-28) MCP client built on the official TypeScript SDK 2.x
// (@modelcontextprotocol/client), driven by interop/gateway_test.go against
// `mcpkit gateway`. It connects over Streamable HTTP pinned to 2026-07-28,
// declares sampling (answering every sampling/createMessage, which reaches it
// as an input_required round, with a fixed text), lists the tools, makes the
// calls it is given, and prints what it saw as one JSON object on stdout.
//
// Usage: node gateway-client.mjs URL CALLS_JSON
//   CALLS_JSON: [{"name": "...", "arguments": {...}}, ...]
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, callsJSON] = process.argv.slice(2);
const out = { samplings: [], calls: [] };

const client = new Client(
  { name: 'mcpkit-gateway-test', version: '1.0.0' },
  {
    capabilities: { sampling: {} },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  },
);
client.setRequestHandler('sampling/createMessage', async (req) => {
  const m = req.params.messages[0];
  out.samplings.push(m && m.content && m.content.text);
  return { model: 'ts-model', role: 'assistant', content: { type: 'text', text: 'a sampled answer from ts' } };
});

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  out.era = client.getProtocolEra();
  out.protocolVersion = client.getNegotiatedProtocolVersion();
  out.server = client.getServerVersion();
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  for (const call of JSON.parse(callsJSON)) {
    try {
      const res = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
      out.calls.push({ name: call.name, text: text(res), isError: res.isError ?? false });
    } catch (e) {
      out.calls.push({ name: call.name, error: String(e && e.message || e) });
    }
  }
} catch (e) {
  out.error = String(e && e.stack || e);
}
console.log(JSON.stringify(out));
await client.close().catch(() => {});
process.exit(0);
