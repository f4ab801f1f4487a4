// System notifications of new approvals, through the service worker's
// registration (sw.js), so they show on a phone's lock screen and in an
// installed app. They need the owner's permission, asked by a button (a
// browser asks only after a tap), and work only while this page or the
// installed app is alive: there is no push service to wake a sleeping
// phone. The text is Corral's own, never the agent's.
import { $ } from './dom.js';

export class Notifier {
  constructor(app) {
    this.app = app;
    this.reg = null;
    this.button = $('#notify-on');
    if (!('serviceWorker' in navigator) || !('Notification' in window)) return;
    // The only Trusted Types policy the CSP allows: it passes exactly
    // the worker's own script and nothing else.
    const url = window.trustedTypes
      ? trustedTypes.createPolicy('corral-sw', { createScriptURL: (u) => { if (u !== '/sw.js') throw new TypeError('not the worker'); return u; } }).createScriptURL('/sw.js')
      : '/sw.js';
    navigator.serviceWorker.register(url, { scope: '/' }).then((reg) => {
      this.reg = reg;
      document.body.dataset.swReady = '1';
      this.show();
    }).catch((e) => { document.body.dataset.swError = String(e); });
    navigator.serviceWorker.addEventListener('message', (e) => {
      if (e.data?.open === 'approvals') location.hash = '#approvals';
    });
    this.button?.addEventListener('click', async () => {
      await Notification.requestPermission();
      this.show();
    });
    app.rpc.on('approval.requested', ({ approval }) => this.requested(approval));
    app.rpc.on('approval.resolved', ({ id }) => this.resolved(id));
  }

  /** show offers the button only while permission can still be asked. */
  show() {
    if (this.button) this.button.hidden = !this.reg || Notification.permission !== 'default';
  }

  async requested(a) {
    if (!this.reg || Notification.permission !== 'granted' || !a?.id) return;
    if (document.visibilityState === 'visible' && document.hasFocus() && this.app.view === 'approvals') return;
    const n = this.app.pending || 1;
    await this.reg.showNotification('Corral: an agent is asking', {
      body: n === 1 ? 'An agent is waiting for your answer.' : `${n} requests are waiting for your answer.`,
      tag: `approval-${a.id}`,
      icon: '/app-icon.png',
      requireInteraction: true,
    });
  }

  /** resolved takes an answered approval's notification away. */
  async resolved(id) {
    if (!this.reg) return;
    for (const n of await this.reg.getNotifications({ tag: `approval-${id}` })) n.close();
  }
}
