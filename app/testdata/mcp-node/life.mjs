// Drives Corral with the official TypeScript SDK client through the life
// of calls: a cancelled command, a garbage stdio line, a long command kept
// alive by progress, 4 MiB of "<". Usage:
//   node life.mjs stdio -- COMMAND ARGS...      (environment passed on)
//   node life.mjs http URL KEY
// Prints one JSON object of findings; the Go test judges them.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === 'stdio') {
  const [command, ...args] = rest.slice(rest.indexOf('--') + 1);
  transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
} else {
  const [url, key] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url + '/mcp'), { requestInit: { headers: { Authorization: 'Bearer ' + key } } });
}
const client = new Client({ name: 'corral-life', version: '1' });
const errors = [];
client.onerror = (e) => errors.push(String(e));
await client.connect(transport);
const out = { transport: mode };
const text = (r) => r.content.map((c) => c.text ?? '').join('');

// 1. A command cancelled by the client's timeout after 1.5 s.
const secs = mode === 'stdio' ? '20.4731' : '20.4732';
try {
  await client.callTool({ name: 'run_command', arguments: { command: `sleep ${secs}` } }, undefined, { timeout: 1500 });
  out.cancel = 'answered';
} catch (e) {
  out.cancel = String(e);
}
out.sleep = secs;

// 2. A garbage line on stdin does not end the session.
if (mode === 'stdio') {
  transport._process.stdin.write('this is not json\n');
  transport._process.stdin.write('[{"jsonrpc":"2.0","id":99,"method":"ping"}]\n');
}
const info = await client.callTool({ name: 'session_info', arguments: {} });
out.afterGarbage = !info.isError;

// 3. A command longer than the timeout, kept alive by its progress.
let progress = 0;
const long = await client.callTool(
  { name: 'run_command', arguments: { command: 'for i in 1 2 3 4 5 6; do echo tick$i; sleep 0.5; done' } },
  undefined,
  { timeout: 1200, resetTimeoutOnProgress: true, onprogress: () => progress++ },
);
out.long = !long.isError && text(long).includes('tick6');
out.progress = progress;

// 4. 4 MiB of "<" round-trips.
const big = '<'.repeat(4 << 20);
const w = await client.callTool({ name: 'file_write', arguments: { path: 'life/big.txt', content: big } });
const r = await client.callTool({ name: 'file_read', arguments: { path: 'life/big.txt' } });
out.big = !w.isError && !r.isError && text(r).startsWith('<'.repeat(256 << 10));

out.errors = errors;
console.log(JSON.stringify(out));
await client.close();
