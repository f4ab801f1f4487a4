// System notifications of new approvals, through the service worker's
// registration (sw.js), so they show on a phone's lock screen and in an
// installed app. They need the owner's permission, asked by a button (a
// browser asks only after a tap), and work only while this page or the
// installed app is alive: there is no push service to wake a sleeping
// phone. The text is Corral's own, never the agent's. Where the worker
// cannot register (a browser refuses service workers on a page whose
// certificate it does not trust, as with the LAN's self-signed one until
// the phone trusts it), the page shows them itself where the browser
// allows that (desktop browsers; Chrome on Android does not).
import { $ } from './dom/h.js';

export class Notifier {
  constructor(app) {
    this.app = app;
    this.reg = null;
    this.page = new Map(); // approval id → Notification, without a worker
    this.button = $('#notify-on');
    if (!('Notification' in window)) return;
    this.button?.addEventListener('click', async () => {
      await Notification.requestPermission();
      this.show();
    });
    app.rpc.on('approval.requested', ({ approval }) => this.requested(approval));
    app.rpc.on('approval.resolved', ({ id }) => this.resolved(id));
    this.show();
    if (!('serviceWorker' in navigator)) return;
    // The only Trusted Types policy the CSP allows: it passes exactly
    // the worker's own script and nothing else.
    const url = window.trustedTypes
      ? trustedTypes.createPolicy('corral-sw', { createScriptURL: (u) => { if (u !== '/sw.js') throw new TypeError('not the worker'); return u; } }).createScriptURL('/sw.js')
      : '/sw.js';
    // ready, not register's own answer: a registration shows
    // notifications only once its worker is active (before, a question
    // that came while the worker was still installing showed none).
    navigator.serviceWorker.register(url, { scope: '/' }).then(() => navigator.serviceWorker.ready).then((reg) => {
      this.reg = reg;
      document.body.dataset.swReady = '1';
      this.show();
    }).catch((e) => { document.body.dataset.swError = String(e); });
    navigator.serviceWorker.addEventListener('message', (e) => {
      if (e.data?.open === 'approvals') location.hash = '#approvals';
    });
  }

  /** show offers the button only while permission can still be asked. */
  show() {
    if (this.button) this.button.hidden = Notification.permission !== 'default' || !!document.body.dataset.signedOut;
  }

  async requested(a) {
    if (Notification.permission !== 'granted' || !a?.id) return;
    if (document.visibilityState === 'visible' && document.hasFocus() && this.app.view === 'approvals') return;
    const n = this.app.pending || 1;
    const title = 'Corral: an agent is asking';
    const opts = {
      body: n === 1 ? 'An agent is waiting for your answer.' : `${n} requests are waiting for your answer.`,
      tag: `approval-${a.id}`,
      icon: '/app-icon.png',
      requireInteraction: true,
    };
    if (this.reg) return this.reg.showNotification(title, opts);
    try {
      const note = new Notification(title, opts);
      note.onclick = () => { window.focus(); location.hash = '#approvals'; note.close(); };
      this.page.set(a.id, note);
    } catch { /* this browser shows notifications only through a worker */ }
  }

  /** resolved takes an answered approval's notification away. */
  async resolved(id) {
    this.page.get(id)?.close();
    this.page.delete(id);
    if (!this.reg) return;
    for (const n of await this.reg.getNotifications({ tag: `approval-${id}` })) n.close();
  }
}
