// Paired devices (PROTOCOL.md section 9). "Pair a phone" asks
// pairing.start for a one-time code and draws its URL as a QR code for
// the phone's camera; device.list and device.revoke keep the list. A
// paired device's own session may call none of these, so the app hides
// this view from it. While a code is on screen the list is polled, so the
// phone shows up here moments after it is named.
import { h, s, $, icons, visible } from '../../lib/dom/h.js';
import { full, ago, clock } from '../../lib/dom/format.js';
import { toast, confirmButton, safeURL } from '../../lib/dom/ui.js';
import { copyLink } from '../../lib/links.js';
import { View } from '../../lib/view.js';

const QUIET = 4; // light modules around the code: scanners need them
const QR_PX = 264; // about this wide on screen, in whole pixels per module
const POLL_MS = 3000;

/**
 * qrSVG draws QR rows ('1' dark, '0' light) as an SVG with the quiet
 * zone: one path of unit squares, dark on white whatever the theme.
 * It throws on rows that are not a square of 0s and 1s.
 */
function qrSVG(rows, label) {
  const n = rows.length;
  if (!n || rows.some((r) => typeof r !== 'string' || r.length !== n || /[^01]/.test(r))) {
    throw new Error('Corral answered a QR code this page cannot draw; open the link on the phone instead.');
  }
  const side = n + 2 * QUIET;
  const d = [];
  rows.forEach((row, y) => {
    for (let x = 0; x < n; x++) {
      if (row[x] !== '1') continue;
      let w = 1;
      while (x + w < n && row[x + w] === '1') w++;
      d.push(`M${x + QUIET} ${y + QUIET}h${w}v1h-${w}z`);
      x += w - 1;
    }
  });
  const svg = s('svg', { viewBox: `0 0 ${side} ${side}`, role: 'img', 'aria-label': label, 'shape-rendering': 'crispEdges' },
    s('rect', { width: side, height: side, class: 'qr-light' }),
    s('path', { d: d.join(''), class: 'qr-dark' }));
  // Whole pixels per module keep the edges sharp; CSS still shrinks it
  // to fit a narrow screen.
  svg.style.width = `${Math.max(2, Math.floor(QR_PX / side)) * side}px`;
  return svg;
}

export class Devices extends View {
  constructor(app) {
    super(app);
    this.list = $('#device-list');
    this.empty = $('#devices-empty');
    this.card = $('#pair-card');
    this.startBtn = $('#pair-start');
    this.newBtn = $('#pair-new');
    this.url = $('#pair-url');
    this.code = null; // {url, expires (ms), total (ms)} while a code is on screen
    this.gen = 0; // the pairing.start whose answer counts
    this.known = null; // device ids of the last list, to notice a new one
    this.shown = ''; // the last list as JSON, so polling redraws only on change
    this.ticker = 0;
    this.poller = 0;

    this.startBtn.addEventListener('click', () => this.start());
    this.newBtn.addEventListener('click', () => this.start());
    $('#pair-retry').addEventListener('click', () => this.start());
    $('#pair-lan-on').addEventListener('click', () => this.lanOn());
    $('#pair-close').addEventListener('click', () => this.closePair());
    $('#pair-copy').addEventListener('click', () => { if (this.code) copyLink(this.code.url, this.url); });
    this.url.addEventListener('focus', () => this.url.select());
  }

  enter() {
    this.reload();
    this.tick();
    this.timers();
  }

  leave() {
    this.timers();
  }

  /** timers runs the countdown and the polling only while they matter. */
  timers() {
    const live = this.visible && !!this.code && this.code.expires > Date.now();
    if (live && !this.ticker) this.ticker = setInterval(() => this.tick(), 1000);
    if (!live && this.ticker) { clearInterval(this.ticker); this.ticker = 0; }
    if (live && !this.poller) this.poller = setInterval(() => this.load(), POLL_MS);
    if (!live && this.poller) { clearInterval(this.poller); this.poller = 0; }
  }

  async start() {
    const gen = ++this.gen;
    const opening = this.card.hidden;
    this.card.hidden = false;
    this.startBtn.hidden = true;
    this.newBtn.disabled = true;
    $('#pair-retry').disabled = true;
    $('#pair-wait').hidden = false;
    if (opening) $('#h-pair').focus();
    try {
      const r = await this.rpc.call('pairing.start');
      if (gen === this.gen) this.showCode(r);
    } catch (e) {
      if (gen === this.gen) this.showProblem(e.message, e.kind === 'unavailable' && await this.lanOff());
    } finally {
      if (gen === this.gen) {
        this.newBtn.disabled = false;
        $('#pair-retry').disabled = false;
        $('#pair-wait').hidden = true;
      }
    }
  }

  showCode(r) {
    const url = safeURL(r.url);
    if (!url) {
      this.showProblem('Corral answered a pairing link this page will not show.');
      return;
    }
    const expires = new Date(r.expiresAt).getTime();
    this.code = { url, expires, total: Math.max(1000, expires - Date.now()) };
    const box = $('#pair-qr');
    $('#pair-problem').hidden = true;
    try {
      box.replaceChildren(qrSVG(r.qr || [], 'QR code of the pairing link'));
      box.hidden = false;
    } catch (e) {
      box.replaceChildren();
      box.hidden = true;
      toast(e.message, { kind: 'error' });
    }
    this.url.value = url;
    $('#pair-fp').textContent = visible(r.fingerprint || '');
    $('#pair-fp-line').hidden = !r.fingerprint;
    this.card.classList.remove('expired');
    $('#pair-expired').hidden = true;
    $('#pair-countdown').hidden = false;
    $('#pair-body').hidden = false;
    this.tick();
    this.timers();
  }

  /** lanOff reports whether the LAN is off in the settings, so one click
   * can turn it on. */
  async lanOff() {
    try {
      const r = await this.rpc.call('settings.get');
      return (r.settings || []).some((st) => st.key === 'server.lan' && st.value === false);
    } catch {
      return false;
    }
  }

  /** lanOn turns the LAN on (settings.set, applied at once) and makes a code. */
  async lanOn() {
    const btn = $('#pair-lan-on');
    btn.disabled = true;
    try {
      await this.rpc.call('settings.set', { values: { 'server.lan': true } });
      toast('The LAN is on: phones on your network can pair now.');
      await this.start();
    } catch (e) {
      this.showProblem(e.message, true);
    } finally {
      btn.disabled = false;
    }
  }

  /** showProblem says why there is no code (pairing off, connection
   * lost); with lan, it offers to turn the LAN on. */
  showProblem(message, lan = false) {
    $('#pair-lan-on').hidden = !lan;
    this.code = null;
    $('#pair-body').hidden = true;
    $('#pair-problem-text').textContent = visible(message);
    $('#pair-problem').hidden = false;
    this.timers();
  }

  closePair() {
    this.gen++;
    this.code = null;
    this.card.hidden = true;
    this.card.classList.remove('expired');
    $('#pair-problem').hidden = true;
    $('#pair-body').hidden = true;
    $('#pair-qr').replaceChildren();
    $('#pair-wait').hidden = true;
    this.newBtn.disabled = false;
    $('#pair-retry').disabled = false;
    this.startBtn.hidden = false;
    this.timers();
    if (this.visible) this.startBtn.focus();
  }

  tick() {
    if (!this.code) return;
    const left = this.code.expires - Date.now();
    $('#pair-fill').style.width = `${Math.max(0, Math.min(100, (left / this.code.total) * 100))}%`;
    $('#pair-left').textContent = left > 0 ? clock(left / 1000) : 'Expired';
    $('#pair-countdown').classList.toggle('low', left < 30000);
    if (left <= 0) {
      this.card.classList.add('expired');
      $('#pair-countdown').hidden = true;
      $('#pair-expired').hidden = false;
      this.timers();
    }
  }

  async load() {
    try {
      const { devices } = await this.rpc.call('device.list');
      devices.sort((a, b) => new Date(b.paired) - new Date(a.paired));
      const fresh = this.known ? devices.filter((d) => !this.known.has(d.id)) : [];
      this.known = new Set(devices.map((d) => d.id));
      const json = JSON.stringify(devices);
      if (json !== this.shown) {
        this.shown = json;
        this.list.replaceChildren(...devices.map((d) => this.render(d)));
        this.empty.hidden = devices.length > 0;
      }
      document.body.dataset.devicesReady = '1';
      if (fresh.length && this.code) {
        // The code on screen was most likely just spent by this phone.
        toast(`${fresh.map((d) => d.name).join(', ')} ${fresh.length === 1 ? 'is' : 'are'} paired.`);
        this.closePair();
      }
    } catch (e) {
      if (e.kind === 'forbidden') {
        this.list.replaceChildren(h('li', { class: 'device muted' }, e.message));
        this.empty.hidden = true;
        this.shown = '';
      } else if (e.kind !== 'io') {
        toast(e.message, { kind: 'error' });
      }
    }
  }

  render(d) {
    const revoke = h('button', { type: 'button', class: 'btn danger', 'aria-label': `Revoke ${d.name}` }, 'Revoke');
    const el = h('li', { class: 'device', dataset: { id: d.id } },
      h('span', { class: 'icon' }, icons.phone()),
      h('div', { class: 'main' },
        h('span', { class: 'name' }, d.name),
        h('p', { class: 'meta' },
          h('span', { class: 'm', title: full(d.paired) }, `paired ${ago(d.paired)}`),
          h('span', { class: 'm', title: full(d.last_seen) }, `last seen ${ago(d.last_seen)}`))),
      revoke);
    confirmButton(revoke, 'Click again to revoke', async () => {
      try {
        await this.rpc.call('device.revoke', { id: d.id });
        el.remove();
        this.known?.delete(d.id);
        this.shown = '';
        this.empty.hidden = this.list.children.length > 0;
        toast(`${d.name} can no longer reach Corral.`);
      } catch (e) {
        toast(e.message, { kind: 'error' });
        this.load();
      }
    });
    return el;
  }
}
