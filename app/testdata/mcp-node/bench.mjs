// Drives an MCP server over stdio with the official TypeScript SDK and
// measures file_read (or read_text_file) calls per second, sequentially
// and with 32 in flight. Usage:
//   node bench.mjs --tool NAME --arg key=value [--calls N] -- COMMAND ARGS...
//   node bench.mjs --tool NAME --arg key=value [--calls N] --http URL [--key KEY]
// Environment for the server comes from this process's environment. With
// --http the server is MCP over streamable HTTP at URL (KEY as a bearer).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const argv = process.argv.slice(2);
const sep = argv.indexOf('--') < 0 ? argv.length : argv.indexOf('--');
const opts = argv.slice(0, sep);
const [command, ...args] = argv.slice(sep + 1);
let tool = 'file_read', calls = 2000, http = '', key = '';
const toolArgs = {};
for (let i = 0; i < opts.length; i += 2) {
  if (opts[i] === '--tool') tool = opts[i + 1];
  else if (opts[i] === '--calls') calls = Number(opts[i + 1]);
  else if (opts[i] === '--http') http = opts[i + 1];
  else if (opts[i] === '--key') key = opts[i + 1];
  else if (opts[i] === '--arg') { const [k, v] = opts[i + 1].split('='); toolArgs[k] = v; }
}

const transport = http
  ? new StreamableHTTPClientTransport(new URL(http), { requestInit: { headers: key ? { Authorization: 'Bearer ' + key } : {} } })
  : new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'corral-bench', version: '1' });
await client.connect(transport);

async function one() {
  const r = await client.callTool({ name: tool, arguments: toolArgs });
  if (r.isError) throw new Error(JSON.stringify(r.content));
  return r;
}
await one(); // warm up

let t = performance.now();
for (let i = 0; i < calls; i++) await one();
const seq = calls / ((performance.now() - t) / 1000);

t = performance.now();
let next = 0;
await Promise.all(Array.from({ length: 32 }, async () => { while (next++ < calls) await one(); }));
const par = calls / ((performance.now() - t) / 1000);

console.log(JSON.stringify({ sequential: seq, inflight32: par }));
await client.close();
