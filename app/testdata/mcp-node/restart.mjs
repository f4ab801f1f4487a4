// The official TypeScript SDK client over MCP over HTTP across a daemon
// restart: it reads a file, prints "ready", waits for a line on stdin
// (the Go test restarts the daemon meanwhile), reads the file again in
// the same session and prints one JSON object of findings.
// Usage: node restart.mjs URL KEY PATH
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createInterface } from 'node:readline';

const [url, key, path] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url + '/mcp'), { requestInit: { headers: { Authorization: 'Bearer ' + key } } });
const client = new Client({ name: 'corral-restart', version: '1' });
const errors = [];
client.onerror = (e) => errors.push(String(e));
await client.connect(transport);
const text = (r) => r.content.map((c) => c.text ?? '').join('');
const out = { session: transport.sessionId };
out.before = text(await client.callTool({ name: 'file_read', arguments: { path } }));
console.log('ready');
const lines = createInterface({ input: process.stdin });
for await (const _ of lines) break;
try {
  out.after = text(await client.callTool({ name: 'file_read', arguments: { path } }));
} catch (e) {
  out.afterError = String(e);
}
out.sessionAfter = transport.sessionId;
out.errors = errors;
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
