// JSON-RPC 2.0 over Corral's /ws (PROTOCOL.md sections 5 and 6). The
// browser sends its session cookie with the upgrade, and the page adds
// the cookie's second secret as a subprotocol (the cookie alone is
// refused). The connection comes back by itself after a drop, and
// "open" listeners re-subscribe. A drop is told apart from a refused
// login: the browser hides a refused upgrade's 401, so after a drop the
// page asks GET /ws plainly with each secret; a 401 to every one means
// the login no longer works (signed out, revoked, expired, unknown after
// a restart), and the state becomes "refused" with no more retries. A
// server that does not answer at all keeps the "closed" state and retries.

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
    this.secrets = protocols.filter((p) => p.startsWith('corral.secret.')).map((p) => p.slice('corral.secret.'.length));
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
      this.refused().then((refused) => {
        if (refused) this.setState('refused');
        else setTimeout(() => this.connect(), wait);
      });
    });
  }

  /** refused asks the server whether it still accepts this page's login:
   * true only when it answers 401 to the cookie with every secret. */
  async refused() {
    const http = this.url.replace(/^ws/, 'http');
    const tries = this.secrets.length ? this.secrets : [''];
    for (const secret of tries) {
      let res;
      try {
        res = await fetch(http, { headers: secret ? { 'X-Corral-Secret': secret } : {}, cache: 'no-store', credentials: 'same-origin' });
      } catch {
        return false; // unreachable: keep trying
      }
      if (res.status !== 401) return false;
    }
    return true;
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
