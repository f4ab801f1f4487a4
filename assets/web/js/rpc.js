// JSON-RPC 2.0 over Corral's /ws (PROTOCOL.md sections 5 and 6). The
// browser sends its session cookie with the upgrade, and the page adds
// the cookie's second secret as a subprotocol (the cookie alone is
// refused). The connection comes back by itself after a drop, and
// "open" listeners re-subscribe.

/** An error answered by the server: code, a polite message and a kind. */
export class RpcError extends Error {
  constructor(err) {
    super(err?.message || 'The call failed.');
    this.code = err?.code ?? -32000;
    this.kind = err?.data?.kind || '';
    this.path = err?.data?.path || '';
  }
}

export class Rpc extends EventTarget {
  constructor(url, protocols) {
    super();
    this.url = url;
    this.protocols = protocols;
    this.nextId = 1;
    this.pending = new Map(); // id → {resolve, reject}
    this.handlers = new Map(); // notification method → [fn]
    this.outbox = [];
    this.ws = null;
    this.state = 'connecting';
    this.delay = 400;
    this.failures = 0;
  }

  connect() {
    const ws = new WebSocket(this.url, this.protocols);
    this.ws = ws;
    ws.addEventListener('open', () => {
      performance.mark('corral:ws-open');
      this.delay = 400;
      this.failures = 0;
      this.setState('open');
      const out = this.outbox;
      this.outbox = [];
      for (const m of out) ws.send(m);
      this.dispatchEvent(new Event('open'));
    });
    ws.addEventListener('message', (e) => this.receive(e.data));
    ws.addEventListener('close', () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.outbox = [];
      for (const [, p] of this.pending) p.reject(new RpcError({ message: 'The connection to Corral was lost.', data: { kind: 'io' } }));
      this.pending.clear();
      this.failures++;
      this.setState('closed');
      const wait = this.delay;
      this.delay = Math.min(this.delay * 2, 8000);
      setTimeout(() => this.connect(), wait);
    });
  }

  setState(s) {
    this.state = s;
    this.dispatchEvent(new CustomEvent('state', { detail: s }));
  }

  receive(text) {
    let msg;
    try { msg = JSON.parse(text); } catch { return; }
    if (msg.method && msg.id === undefined) {
      for (const fn of this.handlers.get(msg.method) || []) {
        try { fn(msg.params || {}); } catch (e) { console.error(e); }
      }
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.error) p.reject(new RpcError(msg.error));
    else p.resolve(msg.result);
  }

  /** call sends one request; it resolves with the result or rejects with an RpcError. */
  call(method, params) {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const req = { jsonrpc: '2.0', id, method };
      if (params !== undefined) req.params = params;
      const text = JSON.stringify(req);
      this.pending.set(id, { resolve, reject });
      if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
      else this.outbox.push(text);
    });
  }

  /** on registers a handler for a notification method. */
  on(method, fn) {
    if (!this.handlers.has(method)) this.handlers.set(method, []);
    this.handlers.get(method).push(fn);
  }
}
