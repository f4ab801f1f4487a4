// The audit log's filters: kept in the URL (so a view can be bookmarked
// and survives a reload), shown in the filter form, turned into
// audit.query parameters and tested on a live event the way the server
// would. Which operations a group holds is the server's (session.info).
import { h, $, $$ } from '../../lib/dom/h.js';
import { isoSeconds, localInput } from '../../lib/dom/format.js';
import { operations, opsIn, opName, decisions, decisionName, scopeName } from '../../lib/dom/names.js';

// op is one operation or a group; op "several" with ops (a comma-separated
// list) is any of those operations.
export const KEYS = ['client', 'user', 'op', 'ops', 'decision', 'range', 'since', 'until', 'text', 'own'];
export const RANGES = { '1h': 3600e3, '24h': 864e5, '7d': 7 * 864e5, '30d': 30 * 864e5 };
// Ranges of whole local days: [days back from today's midnight for since, for until].
export const DAYS = { yesterday: [1, 0] };
export const HOUR = 3600e3, DAY = 864e5;

// Several actions at once, as audit.query parameters and as a test on a live event.
const OP_GROUPS = {
  changes: { q: () => ({ changed: true }), test: (e) => (e.changes || []).length > 0 },
  looks: { q: () => ({ ops: opsIn('looks') }), test: (e) => opsIn('looks').includes(e.op) },
  asked: { q: () => ({ asked: true }), test: (e) => !!e.answer || e.decided_by === 'timeout' },
};

export function blankFilter() {
  return Object.fromEntries(KEYS.map((k) => [k, '']));
}

/** ownHousekeeping reports whether e is the owner's own looking around, by the server's tables (session.info). */
function ownHousekeeping(e, t) {
  const own = t.owner_clients.includes(e.client) || e.client.startsWith(t.device_prefix);
  return own && t.ops.includes(e.op);
}

/** lowerASCII lowers A–Z only, as the server's search does. */
const lowerASCII = (s) => String(s || '').replace(/[A-Z]/g, (c) => c.toLowerCase());
const has = (s, part) => lowerASCII(s).includes(lowerASCII(part));

/** midnight is local midnight, days before today's. */
function midnight(now, days) {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - days);
  return d.getTime();
}

/** knownRange reports whether a range names a fixed span ("last hour", "yesterday"). */
export const knownRange = (r) => !!(RANGES[r] || DAYS[r]);

/** serverFilter turns filter f into audit.query parameters, fixing "last N" to now. */
export function serverFilter(f, now) {
  const q = {};
  for (const k of ['user', 'decision', 'text']) if (f[k]) q[k] = f[k];
  if (f.client) q.agent = f.client; // a part of the agent's name, any case
  if (f.own !== '1') q.hide_own = true; // the owner's own looking around stays out unless asked for
  if (OP_GROUPS[f.op]) Object.assign(q, OP_GROUPS[f.op].q());
  else if (f.op === 'several') {
    if (f.ops) q.ops = f.ops.split(',');
  } else if (f.op) q.op = f.op;
  if (RANGES[f.range]) q.since = isoSeconds(now - RANGES[f.range]);
  if (DAYS[f.range]) {
    q.since = isoSeconds(midnight(now, DAYS[f.range][0]));
    q.until = isoSeconds(midnight(now, DAYS[f.range][1]));
  }
  if (f.range === 'custom') {
    if (f.since) q.since = f.since;
    if (f.until) q.until = f.until;
  }
  return q;
}

/** matches tests a live event against query q (made from filter f) as the server would. */
export function matches(q, f, e, housekeeping) {
  if (!q) return false;
  for (const k of ['user', 'op', 'decision']) if (q[k] && e[k] !== q[k]) return false;
  if (q.agent && !has(e.client, q.agent)) return false;
  if (q.hide_own && housekeeping && ownHousekeeping(e, housekeeping)) return false;
  const group = OP_GROUPS[f.op];
  if (group && !group.test(e)) return false;
  if (q.ops && !q.ops.includes(e.op)) return false;
  if (q.text && !has(e.target, q.text) && !has(e.detail, q.text)) return false;
  const t = new Date(e.time).getTime();
  if (q.since && t < Date.parse(q.since)) return false;
  if (q.until && t >= Date.parse(q.until)) return false;
  return true;
}

/**
 * FilterForm is the filter form: it fills its choices, reads the filter
 * from the form and writes it back. onChange(f) is called with a new
 * filter the owner made.
 */
export class FilterForm {
  constructor(onChange) {
    this.onChange = onChange;
    this.form = $('#filters');
    this.clients = new Set();
    this.wire();
  }

  /** fillChoices adds the server's operations and decisions to their menus (and extra, an operation the URL named). */
  fillChoices(extra) {
    const sel = $('#f-op');
    const have = new Set($$('option', sel).map((o) => o.value));
    const ops = operations();
    if (extra && !have.has(extra) && !ops.includes(extra)) ops.push(extra);
    for (const op of ops) {
      if (have.has(op)) continue;
      sel.append(h('option', { value: op }, `${opName(op)} (${op})`));
    }
    const list = $('#f-ops-list');
    const ticks = new Set($$('input', list).map((x) => x.value));
    for (const op of ops) {
      if (ticks.has(op)) continue;
      list.append(h('label', null, h('input', { type: 'checkbox', value: op }), opName(op)));
    }
    const dsel = $('#f-decision');
    const haveD = new Set($$('option', dsel).map((o) => o.value));
    for (const d of decisions()) if (!haveD.has(d)) dsel.append(h('option', { value: d }, decisionName(d)));
  }

  setScopes(scopes, current) {
    const sel = $('#f-user');
    const have = new Set($$('option', sel).map((o) => o.value));
    for (const sc of scopes) if (!have.has(sc)) sel.append(h('option', { value: sc }, scopeName(sc)));
    if (current && !have.has(current) && !scopes.includes(current)) sel.append(h('option', { value: current }, current));
    sel.value = current;
  }

  addClients(names) {
    const dl = $('#dl-clients');
    for (const n of names) {
      if (!n || this.clients.has(n)) continue;
      this.clients.add(n);
      dl.append(h('option', { value: n }));
    }
  }

  wire() {
    let timer = 0;
    const now = () => { clearTimeout(timer); this.read(); };
    const soon = () => { clearTimeout(timer); timer = setTimeout(() => this.read(), 300); };
    this.form.addEventListener('submit', (e) => { e.preventDefault(); now(); });
    $('#f-client').addEventListener('input', soon);
    $('#f-text').addEventListener('input', soon);
    $('#f-text').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); now(); } });
    $('#f-client').addEventListener('change', now);
    for (const id of ['#f-user', '#f-op', '#f-decision', '#f-since', '#f-until', '#f-own']) {
      $(id).addEventListener('change', () => this.read());
    }
    $('#f-range').addEventListener('change', () => {
      const custom = $('#f-range').value === 'custom';
      if (custom && !$('#f-since').value) {
        $('#f-since').value = localInput(Date.now() - DAY);
        $('#f-until').value = localInput(Date.now() + 60e3);
      }
      this.read();
      if (custom) $('#f-since').focus();
    });
    $('#f-clear').addEventListener('click', () => this.onChange(blankFilter(), true));
    $('#f-ops-list').addEventListener('change', () => this.read());
    $('#f-ops-looks').addEventListener('click', () => {
      for (const x of $$('#f-ops-list input')) if (opsIn('looks').includes(x.value)) x.checked = true;
      this.read();
    });
    $('#f-ops-none').addEventListener('click', () => {
      for (const x of $$('#f-ops-list input')) x.checked = false;
      this.read();
    });
    const wrap = $('#filters-wrap');
    if (matchMedia('(max-width: 640px)').matches) wrap.open = false;
  }

  /**
   * read takes the filter from the form and passes it on when it differs
   * from the current one. Choosing "Several actions…" starts from the one
   * action chosen before, if any.
   */
  read() {
    const f = blankFilter();
    for (const k of KEYS) {
      const el = this.form.elements[k];
      f[k] = !el ? '' : el.type === 'checkbox' ? (el.checked ? '1' : '') : el.value.trim();
    }
    if (f.op === 'several') {
      const ticked = $$('#f-ops-list input:checked').map((x) => x.value);
      if (!ticked.length && this.last && !OP_GROUPS[this.last] && this.last !== 'several') ticked.push(this.last);
      f.ops = ticked.join(',');
    }
    if (f.range === 'custom') {
      f.since = f.since ? isoSeconds(new Date(f.since)) : '';
      f.until = f.until ? isoSeconds(new Date(f.until)) : '';
    } else {
      f.since = f.until = '';
    }
    this.onChange(f);
  }

  /** show puts filter f into the form. */
  show(f) {
    this.last = f.op;
    const several = f.op === 'several';
    const ops = new Set(several && f.ops ? f.ops.split(',') : []);
    for (const x of $$('#f-ops-list input')) x.checked = ops.has(x.value);
    $('#f-ops-box').hidden = !several;
    for (const k of KEYS) {
      const el = this.form.elements[k];
      if (!el) continue;
      if (el.type === 'checkbox') el.checked = f[k] === '1';
      else el.value = (k === 'since' || k === 'until') && f[k] ? localInput(f[k]) : f[k];
    }
    const custom = f.range === 'custom';
    for (const el of $$('.custom-range')) el.hidden = !custom;
    const n = ['client', 'user', 'op', 'decision', 'range', 'text'].filter((k) => f[k]).length;
    const count = $('#filter-count');
    count.hidden = !n;
    count.textContent = String(n);
    $('#f-clear').closest('.field').hidden = !n && !f.since && !f.until;
  }
}
