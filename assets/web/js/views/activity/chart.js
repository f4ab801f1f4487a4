// A stacked bar chart of events per bucket (allowed, denied, failed),
// hand-drawn in SVG: a few dozen rectangles do not need a library. Bars
// can be pointed at, stepped through with the arrow keys, and picked
// (click or Enter) to narrow the log to that hour or day.
import { s } from '../../lib/dom/h.js';
import { plural, num, dateFormat, pad } from '../../lib/dom/format.js';

function niceMax(v) {
  if (v <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(v));
  // Even steps, so the middle grid line is a whole number too.
  for (const m of [1, 2, 4, 6, 8, 10]) if (m * p >= v && (m * p) % 2 === 0) return m * p;
  return 10 * p;
}

export class Chart {
  constructor(el, readout, onPick) {
    this.el = el;
    this.readout = readout;
    this.onPick = onPick;
    this.cols = [];
    this.sel = -1;
    this.hint = readout.textContent;
    // The size comes from the observer, so drawing never forces a layout.
    this.size = [el.clientWidth, el.clientHeight];
    new ResizeObserver(([e]) => {
      const size = [e.contentRect.width, e.contentRect.height];
      if (size[0] === this.size[0] && size[1] === this.size[1]) return;
      this.size = size;
      this.draw();
    }).observe(el);
    el.addEventListener('keydown', (e) => this.key(e));
    el.addEventListener('blur', () => this.highlight(-1));
  }

  /** set shows buckets from audit.stats over [start, end) in steps of stepMs. */
  set(buckets, start, end, stepMs) {
    const first = Math.floor(start / stepMs) * stepMs;
    const byStart = new Map(buckets.map((b) => [new Date(b.start).getTime(), b]));
    const cols = [];
    for (let t = first; t < end && cols.length < 2000; t += stepMs) {
      const b = byStart.get(t);
      cols.push({ t, allow: b?.allow || 0, deny: b?.deny || 0, error: b?.error || 0 });
    }
    this.cols = cols;
    this.stepMs = stepMs;
    this.sel = -1;
    const tot = cols.reduce((a, c) => ({ allow: a.allow + c.allow, deny: a.deny + c.deny, error: a.error + c.error }), { allow: 0, deny: 0, error: 0 });
    const all = tot.allow + tot.deny + tot.error;
    this.el.setAttribute('aria-label', `Activity chart: ${plural(all, 'event')}, ${num(tot.deny)} denied and ${num(tot.error)} failed. Use the arrow keys to read each ${stepMs >= 864e5 ? 'day' : 'hour'}.`);
    this.draw();
  }

  /** label names a column: its date when long or withDate, its hour for hourly columns. */
  label(t, long, withDate = false) {
    const d = new Date(t);
    if (this.stepMs >= 864e5) {
      // Daily buckets start at UTC midnight: name them by their UTC date.
      return dateFormat({ timeZone: 'UTC', weekday: long ? 'short' : undefined, day: 'numeric', month: 'short' }).format(d);
    }
    const hm = `${pad(d.getHours())}:00`;
    if (long) return `${dateFormat({ weekday: 'short', day: 'numeric', month: 'short' }).format(d)} ${hm}`;
    return withDate ? `${dateFormat({ day: 'numeric', month: 'short' }).format(d)} ${hm}` : hm;
  }

  draw() {
    const W = Math.max(200, Math.round(this.size[0])), Hh = Math.max(100, Math.round(this.size[1]));
    const left = 34, bottom = 20, top = 6;
    const cols = this.cols;
    const svg = s('svg', { viewBox: `0 0 ${W} ${Hh}`, width: W, height: Hh, 'aria-hidden': 'true' });
    const max = niceMax(Math.max(0, ...cols.map((c) => c.allow + c.deny + c.error)));
    const plotH = Hh - bottom - top;
    const y = (v) => top + plotH - (v / max) * plotH;
    for (const g of [0, max / 2, max]) {
      svg.append(s('line', { class: 'grid', x1: left, x2: W, y1: y(g), y2: y(g) }));
      svg.append(s('text', { x: left - 6, y: y(g) + 4, 'text-anchor': 'end' }, g >= 1000 ? `${+(g / 1000).toFixed(1)}k` : String(g)));
    }
    this.geom = { left, W };
    if (!cols.length) {
      this.el.replaceChildren(svg);
      return;
    }
    const bw = (W - left) / cols.length;
    const gap = bw > 8 ? 2 : bw > 3 ? 1 : 0;
    // Hourly columns over several days name the date at each day's first label.
    const dayOf = (t) => new Date(t).toDateString();
    const days = this.stepMs < 864e5 && dayOf(cols[0].t) !== dayOf(cols.at(-1).t);
    const every = Math.max(1, Math.ceil((days ? 96 : 70) / bw));
    let empty = true, lastDay = '';
    cols.forEach((c, i) => {
      const x = left + i * bw;
      const g = s('g', { class: 'col' });
      g.append(s('rect', { class: 'hit', x, y: top, width: bw, height: plotH }));
      let base = 0;
      for (const k of ['allow', 'error', 'deny']) {
        const v = c[k];
        if (!v) continue;
        empty = false;
        const y0 = y(base), y1 = y(base + v);
        g.append(s('rect', { class: `s-${k}`, x: x + gap / 2, y: y1, width: Math.max(0.5, bw - gap), height: Math.max(1, y0 - y1), rx: bw > 6 ? 2 : 0 }));
        base += v;
      }
      svg.append(g);
      c.g = g;
      if (i % every === 0) {
        const day = dayOf(c.t);
        svg.append(s('text', { x: x + bw / 2, y: Hh - 4, 'text-anchor': 'middle' }, this.label(c.t, false, days && day !== lastDay)));
        lastDay = day;
      }
    });
    if (empty) {
      svg.append(s('text', { class: 'nodata', x: left + (W - left) / 2, y: top + plotH / 2, 'text-anchor': 'middle' }, 'No events in this time'));
    }
    svg.addEventListener('pointermove', (e) => this.highlight(this.indexAt(e)));
    svg.addEventListener('pointerleave', () => this.highlight(-1));
    svg.addEventListener('click', (e) => {
      const i = this.indexAt(e);
      if (i >= 0) this.pick(i);
    });
    this.el.replaceChildren(svg);
    if (this.sel >= 0) this.highlight(this.sel);
  }

  indexAt(e) {
    const svg = this.el.firstElementChild;
    if (!svg || !this.cols.length) return -1;
    const r = svg.getBoundingClientRect();
    const x = ((e.clientX - r.left) / r.width) * this.geom.W;
    const i = Math.floor((x - this.geom.left) / ((this.geom.W - this.geom.left) / this.cols.length));
    return i >= 0 && i < this.cols.length ? i : -1;
  }

  highlight(i) {
    for (const c of this.cols) c.g?.classList.remove('hover', 'sel');
    this.sel = i;
    if (i < 0) {
      this.readout.textContent = this.hint;
      return;
    }
    const c = this.cols[i];
    c.g?.classList.add(document.activeElement === this.el ? 'sel' : 'hover');
    const total = c.allow + c.deny + c.error;
    this.readout.textContent = `${this.label(c.t, true)}: ${plural(total, 'event')} — ${num(c.allow)} allowed, ${num(c.deny)} denied, ${num(c.error)} failed.`;
  }

  pick(i) {
    const c = this.cols[i];
    if (c) this.onPick(c.t, c.t + this.stepMs);
  }

  key(e) {
    if (!this.cols.length) return;
    let i = this.sel;
    if (e.key === 'ArrowRight') i = Math.min(this.cols.length - 1, i + 1);
    else if (e.key === 'ArrowLeft') i = i < 0 ? this.cols.length - 1 : Math.max(0, i - 1);
    else if (e.key === 'Home') i = 0;
    else if (e.key === 'End') i = this.cols.length - 1;
    else if ((e.key === 'Enter' || e.key === ' ') && i >= 0) { e.preventDefault(); this.pick(i); return; }
    else return;
    e.preventDefault();
    this.highlight(i);
  }
}
