// The audit log: filters kept in the URL (so a view can be bookmarked and
// survives a reload), an activity chart from audit.stats, a table paged by
// keyset cursor as the owner scrolls, a detail dialog per event (also
// opened by "#event=ID", from the tray's Recent activity), a live tail from
// audit.subscribe, and CSV / JSON Lines export of the filter. Coming back
// to the view from another one brings the table up to date.
import {
  h, $, $$, when, full, size, isoSeconds, localInput, opNames, opName, decisionNames,
  decidedBy, scopeName, eventScope, scopePhrase, toast, plural, num, follow, visible, confirmButton,
} from './dom.js';
import { Chart } from './chart.js';
import { openFile, shareDialog, scopeContext } from './links.js';

const KEYS = ['client', 'user', 'op', 'decision', 'range', 'since', 'until', 'text', 'own'];
const RANGES = { '1h': 3600e3, '24h': 864e5, '7d': 7 * 864e5, '30d': 30 * 864e5 };
// Ranges of whole local days: [days back from today's midnight for since, for until].
const DAYS = { yesterday: [1, 0] };
// Several actions at once, as audit.query parameters and as a test on a live event.
const OP_GROUPS = {
  changes: { q: { changed: true }, test: (e) => (e.changes || []).length > 0 },
  looks: { ops: ['file.read', 'file.stat', 'folder.list', 'file.find', 'file.grep'] },
};
for (const g of Object.values(OP_GROUPS)) {
  if (g.ops) {
    g.q = { ops: g.ops };
    g.test = (e) => g.ops.includes(e.op);
  }
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

/** exitCode is a finished command's exit status from its event's detail, or null. */
export function exitCode(e) {
  if (e.op !== 'command.run') return null;
  const m = /(?:^|; )exit (\d+)(?:;|$)/.exec(e.detail || '');
  return m ? Number(m[1]) : null;
}
const HOUR = 3600e3, DAY = 864e5;
const PAGE = 100;
// Operations whose target is a path in the event's scope.
const PATH_OPS = new Set(['file.read', 'file.write', 'file.edit', 'file.stat', 'folder.list', 'file.find', 'file.grep',
  'file.move', 'result.save', 'link.create', 'files.out']);

function blankFilter() {
  return Object.fromEntries(KEYS.map((k) => [k, '']));
}

export class Activity {
  constructor(app) {
    this.app = app;
    this.rpc = app.rpc;
    this.f = blankFilter();
    this.bucket = 'hour';
    this.live = false;
    this.gen = 0;
    this.cursor = '';
    this.loading = false;
    this.events = new Map(); // id → event, for rows on the page
    this.loaded = false;
    this.hash = null;
    this.clients = new Set();
    this.pages = 0; // pages of the table loaded since the last reload
    this.away = false; // another view was shown since the table was loaded
    this.wanted = 0; // the latest "#event=ID" asked for
    this.detailId = 0; // the event the detail shows

    this.form = $('#filters');
    this.tbody = $('#audit-table tbody');
    this.summary = $('#audit-summary');
    this.more = $('#load-more');
    this.end = $('#audit-end');
    this.emptyEl = $('#audit-empty');
    this.chartEl = $('#chart');
    this.chart = new Chart(this.chartEl, $('#chart-readout'), (from, to) => this.pickTime(from, to));

    this.fillOps();
    this.wire();

    this.rpc.on('audit.event', ({ event }) => this.onEvent(event));
    this.rpc.addEventListener('open', () => this.connected());
  }

  // ---------- filters and the URL ----------

  fillOps(extra) {
    const sel = $('#f-op');
    const have = new Set($$('option', sel).map((o) => o.value));
    const ops = Object.keys(opNames);
    if (extra && !have.has(extra) && !ops.includes(extra)) ops.push(extra);
    for (const op of ops) {
      if (have.has(op)) continue;
      sel.append(h('option', { value: op }, `${opName(op)} (${op})`));
    }
  }

  setScopes(scopes) {
    const sel = $('#f-user');
    const have = new Set($$('option', sel).map((o) => o.value));
    for (const sc of scopes) if (!have.has(sc)) sel.append(h('option', { value: sc }, scopeName(sc)));
    if (this.f.user && !have.has(this.f.user) && !scopes.includes(this.f.user)) sel.append(h('option', { value: this.f.user }, this.f.user));
    sel.value = this.f.user;
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
    const soon = () => { clearTimeout(timer); timer = setTimeout(() => this.fromForm(), 300); };
    this.form.addEventListener('submit', (e) => { e.preventDefault(); clearTimeout(timer); this.fromForm(); });
    $('#f-client').addEventListener('input', soon);
    $('#f-text').addEventListener('input', soon);
    $('#f-text').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); clearTimeout(timer); this.fromForm(); } });
    $('#f-client').addEventListener('change', () => { clearTimeout(timer); this.fromForm(); });
    for (const id of ['#f-user', '#f-op', '#f-decision', '#f-since', '#f-until', '#f-own']) {
      $(id).addEventListener('change', () => this.fromForm());
    }
    $('#f-range').addEventListener('change', () => {
      const custom = $('#f-range').value === 'custom';
      if (custom && !$('#f-since').value) {
        $('#f-since').value = localInput(Date.now() - DAY);
        $('#f-until').value = localInput(Date.now() + 60e3);
      }
      this.fromForm();
      if (custom) $('#f-since').focus();
    });
    $('#f-clear').addEventListener('click', () => {
      this.f = blankFilter();
      this.apply();
    });
    for (const b of $$('[data-bucket]')) {
      b.addEventListener('click', () => {
        this.bucket = b.dataset.bucket;
        this.writeURL();
        this.reloadChart();
      });
    }
    $('#live').addEventListener('click', () => this.setLive(!this.live));

    // Rows: click, Enter or Space opens the detail.
    this.tbody.addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-id]');
      if (tr) this.openDetail(this.events.get(Number(tr.dataset.id)));
    });
    this.tbody.addEventListener('keydown', (e) => {
      const tr = e.target.closest('tr[data-id]');
      if (!tr) return;
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); this.openDetail(this.events.get(Number(tr.dataset.id))); }
      else if (e.key === 'ArrowDown') { e.preventDefault(); tr.nextElementSibling?.focus(); }
      else if (e.key === 'ArrowUp') { e.preventDefault(); tr.previousElementSibling?.focus(); }
    });
    // Back to the event's row, when the table shows it (an event opened by
    // "#event=ID" may not be on the page).
    $('#detail').addEventListener('close', () => this.tbody.querySelector(`tr[data-id="${this.detailId}"]`)?.focus());

    this.more.addEventListener('click', () => this.loadMore());
    new IntersectionObserver((entries) => {
      if (entries.some((x) => x.isIntersecting)) this.loadMore();
    }, { rootMargin: '600px 0px' }).observe($('#audit-more'));

    for (const b of $$('[data-export]')) b.addEventListener('click', () => this.export(b.dataset.export));
    $('#export-cancel').addEventListener('click', () => { this.exportCancel = true; });

    const wrap = $('#filters-wrap');
    if (matchMedia('(max-width: 640px)').matches) wrap.open = false;
  }

  fromForm() {
    const f = blankFilter();
    for (const k of KEYS) {
      const el = this.form.elements[k];
      f[k] = !el ? '' : el.type === 'checkbox' ? (el.checked ? '1' : '') : el.value.trim();
    }
    if (f.range === 'custom') {
      f.since = f.since ? isoSeconds(new Date(f.since)) : '';
      f.until = f.until ? isoSeconds(new Date(f.until)) : '';
    } else {
      f.since = f.until = '';
    }
    if (KEYS.every((k) => f[k] === this.f[k])) return;
    this.f = f;
    this.apply();
  }

  toForm() {
    for (const k of KEYS) {
      const el = this.form.elements[k];
      if (!el) continue;
      if (el.type === 'checkbox') el.checked = this.f[k] === '1';
      else el.value = (k === 'since' || k === 'until') && this.f[k] ? localInput(this.f[k]) : this.f[k];
    }
    const custom = this.f.range === 'custom';
    for (const el of $$('.custom-range')) el.hidden = !custom;
    const n = ['client', 'user', 'op', 'decision', 'range', 'text'].filter((k) => this.f[k]).length;
    const count = $('#filter-count');
    count.hidden = !n;
    count.textContent = String(n);
    $('#f-clear').closest('.field').hidden = !n && !this.f.since && !this.f.until;
  }

  params() {
    const p = new URLSearchParams();
    for (const k of KEYS) {
      if (!this.f[k]) continue;
      if ((k === 'since' || k === 'until') && this.f.range !== 'custom') continue;
      p.set(k, this.f[k]);
    }
    if (this.bucket !== 'hour') p.set('bucket', this.bucket);
    if (this.live) p.set('live', '1');
    return p;
  }

  writeURL() {
    const q = this.params().toString();
    this.hash = `#activity${q ? `?${q}` : ''}`;
    if (location.hash !== this.hash) history.replaceState(null, '', this.hash);
    this.app.setActivityHash(this.hash);
  }

  /** show is called by the router with the hash's query. */
  show(params) {
    const hash = `#activity${[...params].length ? `?${params}` : ''}`;
    if (this.loaded && hash === this.hash) {
      if (this.away) {
        this.away = false;
        this.catchUp();
      }
      return;
    }
    this.away = false;
    const f = blankFilter();
    for (const k of KEYS) f[k] = params.get(k) || '';
    if (f.range && f.range !== 'custom' && !RANGES[f.range] && !DAYS[f.range]) f.range = '';
    if (f.decision && !decisionNames[f.decision]) f.decision = '';
    this.f = f;
    this.bucket = params.get('bucket') === 'day' ? 'day' : 'hour';
    this.setLive(params.get('live') === '1', false);
    if (f.op) this.fillOps(f.op);
    if (f.user) this.setScopes([]);
    this.apply();
  }

  /** hide is called by the router when another view is shown. */
  hide() {
    if (this.loaded) this.away = true;
  }

  apply() {
    this.toForm();
    this.writeURL();
    this.reload();
  }

  /** serverFilter turns the form into audit.query parameters, fixing "last N" to now. */
  serverFilter(now) {
    const f = this.f;
    const q = {};
    for (const k of ['user', 'decision', 'text']) if (f[k]) q[k] = f[k];
    if (f.client) q.agent = f.client; // a part of the agent's name, any case
    if (f.own !== '1') q.hide_own = true; // the owner's own looking around stays out unless asked for
    if (OP_GROUPS[f.op]) Object.assign(q, OP_GROUPS[f.op].q);
    else if (f.op) q.op = f.op;
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

  matches(e) {
    const q = this.query;
    if (!q) return false;
    for (const k of ['user', 'op', 'decision']) if (q[k] && e[k] !== q[k]) return false;
    if (q.agent && !has(e.client, q.agent)) return false;
    if (q.hide_own && this.app.info?.housekeeping && ownHousekeeping(e, this.app.info.housekeeping)) return false;
    const group = OP_GROUPS[this.f.op];
    if (group && !group.test(e)) return false;
    if (q.text && !has(e.target, q.text) && !has(e.detail, q.text)) return false;
    const t = new Date(e.time).getTime();
    if (q.since && t < Date.parse(q.since)) return false;
    if (q.until && t >= Date.parse(q.until)) return false;
    return true;
  }

  pickTime(from, to) {
    this.f.range = 'custom';
    this.f.since = isoSeconds(from);
    this.f.until = isoSeconds(to);
    if (this.bucket === 'day' && to - from <= DAY) this.bucket = 'hour';
    this.apply();
  }

  // ---------- loading ----------

  connected() {
    this.rpc.call('audit.subscribe').catch(() => {});
    if (this.loaded) this.reload();
  }

  async reload() {
    const gen = ++this.gen;
    const now = Date.now();
    this.query = this.serverFilter(now);
    this.cursor = '';
    this.loading = true;
    this.summary.textContent = 'Loading…';
    this.tbody.setAttribute('aria-busy', 'true');
    const rows = this.rpc.call('audit.query', { ...this.query, limit: PAGE });
    const chart = this.loadChart(gen, now);
    try {
      const page = await rows;
      if (gen !== this.gen) return;
      performance.mark('corral:rows-data');
      this.events.clear();
      this.tbody.replaceChildren(...page.events.map((e) => this.row(e)));
      this.cursor = page.next_cursor || '';
      this.loaded = true;
      this.pages = 1;
      this.afterPage();
      performance.mark('corral:rows');
    } catch (e) {
      if (gen !== this.gen) return;
      // A caller without the audit log (forbidden) sees the server's sentence.
      this.summary.textContent = e.kind === 'io' ? 'Waiting for the connection…' : visible(e.message);
    } finally {
      if (gen === this.gen) {
        this.loading = false;
        this.tbody.removeAttribute('aria-busy');
      }
    }
    await chart;
    if (gen !== this.gen) return;
    // Ready once the browser is about to paint the new rows and chart (a
    // hidden tab gets no animation frames: then a timer says so).
    let said = false;
    const ready = () => {
      if (said || gen !== this.gen) return;
      said = true;
      performance.mark('corral:audit-ready');
      document.body.dataset.auditReady = String(gen);
      document.dispatchEvent(new CustomEvent('corral:audit-ready', { detail: gen }));
    };
    requestAnimationFrame(ready);
    setTimeout(ready, 500);
  }

  chartSpan(now) {
    const q = this.query;
    let step = this.bucket === 'day' ? DAY : HOUR;
    let start, end;
    if (q.since) {
      start = Date.parse(q.since);
      end = q.until ? Date.parse(q.until) : now;
    } else {
      end = q.until ? Date.parse(q.until) : now;
      start = end - (step === DAY ? 30 * DAY : 48 * HOUR);
    }
    if ((end - start) / step > 24 * 31) step = DAY;
    let label;
    if (!q.since && !q.until) label = step === DAY && this.bucket === 'day' ? 'Last 30 days' : 'Last 48 hours';
    else if (RANGES[this.f.range] || DAYS[this.f.range]) label = $('#f-range').selectedOptions[0]?.textContent || '';
    else label = `${full(start)} – ${full(end)}`;
    return { start: Math.floor(start / step) * step, end, step, label };
  }

  async loadChart(gen, now) {
    const span = this.chartSpan(now);
    $('#h-chart').textContent = span.step === DAY ? 'Events per day' : 'Events per hour';
    $('#chart-span').textContent = span.label;
    for (const b of $$('[data-bucket]')) b.setAttribute('aria-pressed', String(b.dataset.bucket === (span.step === DAY ? 'day' : 'hour')));
    const params = { ...this.query, since: isoSeconds(span.start), bucket: span.step === DAY ? 'day' : 'hour' };
    if (!this.query.until) delete params.until;
    this.chartEl.classList.add('loading');
    try {
      const r = await this.rpc.call('audit.stats', params);
      if (gen !== this.gen) return;
      performance.mark('corral:chart-data');
      this.chart.set(r.buckets, span.start, span.end, span.step);
      performance.mark('corral:chart');
    } catch (e) {
      if (e.kind !== 'io' && e.kind !== 'forbidden') toast(e.message, { kind: 'error' });
    } finally {
      this.chartEl.classList.remove('loading');
    }
  }

  reloadChart() {
    this.loadChart(this.gen, Date.now());
  }

  async loadMore() {
    if (this.loading || !this.cursor || !this.loaded) return;
    const gen = this.gen;
    this.loading = true;
    this.more.disabled = true;
    try {
      const page = await this.rpc.call('audit.query', { ...this.query, cursor: this.cursor, limit: PAGE });
      if (gen !== this.gen) return;
      this.tbody.append(...page.events.filter((e) => !this.events.has(e.id)).map((e) => this.row(e)));
      this.cursor = page.next_cursor || '';
      this.pages++;
      this.afterPage();
    } catch (e) {
      if (gen === this.gen && e.kind !== 'io') toast(e.message, { kind: 'error' });
    } finally {
      if (gen === this.gen) this.loading = false;
      this.more.disabled = false;
    }
    // Still at the bottom (a tall screen): keep filling.
    requestAnimationFrame(() => {
      const r = $('#audit-more').getBoundingClientRect();
      if (this.cursor && r.top < innerHeight + 300 && !$('#view-activity').hidden) this.loadMore();
    });
  }

  /**
   * catchUp brings the table up to date when the owner comes back to the
   * view: what happened meanwhile must be there. With the live tail on,
   * the table already is. With only the first page loaded, that page is
   * loaded again (which also moves a "last hour" window to now). When the
   * owner has scrolled into older pages, reloading would throw them away,
   * so the newer events are put on top instead, as the live tail would.
   */
  async catchUp() {
    if (this.live) return;
    if (this.pages <= 1) {
      this.reload();
      return;
    }
    const gen = this.gen;
    const top = Number(this.tbody.querySelector('tr[data-id]')?.dataset.id || 0);
    try {
      const page = await this.rpc.call('audit.query', { ...this.query, limit: PAGE });
      if (gen !== this.gen) return;
      const fresh = page.events.filter((e) => e.id > top && !this.events.has(e.id));
      if (fresh.length === page.events.length && page.next_cursor) {
        this.reload(); // more new events than a page: start from the newest
        return;
      }
      this.tbody.prepend(...fresh.map((e) => this.freshRow(e)));
      this.afterPage();
      if (fresh.length) this.reloadChart();
    } catch (e) {
      if (gen === this.gen && e.kind !== 'io') toast(e.message, { kind: 'error' });
    }
  }

  afterPage() {
    const n = this.events.size;
    this.emptyEl.hidden = n > 0;
    this.more.hidden = !this.cursor;
    this.end.hidden = !!this.cursor || n === 0;
    const filtered = Object.keys(this.query).length > 0;
    this.summary.textContent = n === 0 ? ''
      : `${this.cursor ? `Showing the newest ${num(n)}` : `${plural(n, 'event')}`}${filtered ? ' matching the filters' : ''}${this.cursor ? ' — scroll for more' : ''}.${this.live ? ' Live: new events appear at the top.' : ''}`;
  }

  row(e) {
    this.events.set(e.id, e);
    this.addClients([e.client]);
    const by = decidedBy(e)[2];
    const exit = exitCode(e);
    return h('tr', { tabindex: '0', dataset: { id: String(e.id), decision: e.decision } },
      h('td', { class: 't-time', title: full(e.time) }, when(e.time)),
      h('td', { class: 't-client' }, e.client),
      h('td', { class: 't-user' }, eventScope(e)),
      h('td', { class: 't-op', title: e.op }, opName(e.op)),
      h('td', { class: 't-target', title: e.target }, e.target || '—'),
      h('td', { class: 't-result' },
        h('span', { class: `pill ${e.decision}` }, decisionNames[e.decision] || e.decision),
        by ? h('span', { class: 't-by' }, by) : null,
        exit ? h('span', { class: 'pill exit-bad', title: 'The command ended with an error status' }, `exit ${exit}`) : null));
  }

  /** freshRow is a row marked as new since the table was loaded. */
  freshRow(e) {
    const tr = this.row(e);
    tr.classList.add('fresh');
    return tr;
  }

  // ---------- live tail ----------

  setLive(on, write = true) {
    this.live = on;
    $('#live').setAttribute('aria-pressed', String(on));
    if (write) {
      this.writeURL();
      this.afterPage();
      if (on) this.reload(); // start from what is there now
    }
  }

  onEvent(e) {
    if (e.op === 'rule.create' || e.op === 'rule.revoke') this.app.rulesChanged();
    if (e.op === 'agents.pause' || e.op === 'agents.resume') this.app.refreshInfo();
    this.addClients([e.client]);
    if (this.events.has(e.id)) {
      // A command's event comes twice: when it starts ("running") and,
      // under the same id, when it ends. Update the row in place.
      const old = this.tbody.querySelector(`tr[data-id="${e.id}"]`);
      if (old) {
        const tr = this.row(e);
        tr.classList.toggle('fresh', old.classList.contains('fresh'));
        old.replaceWith(tr);
      }
      return;
    }
    if (!this.live || !this.loaded || !this.matches(e)) return;
    this.tbody.prepend(this.freshRow(e));
    this.afterPage();
    clearTimeout(this.chartTimer);
    this.chartTimer = setTimeout(() => this.reloadChart(), 2000);
  }

  // ---------- detail ----------

  /**
   * openEvent shows the detail of event id ("#event=ID", from the tray's
   * Recent activity), from the table when it is there, else from the log.
   */
  async openEvent(id) {
    const want = ++this.wanted;
    let e = this.events.get(id);
    if (!e) {
      try {
        e = await this.findEvent(id);
      } catch (err) {
        if (want === this.wanted) toast(err.message, { kind: 'error' });
        return;
      }
    }
    if (want !== this.wanted) return;
    if (!e) {
      toast(`Event ${id} is not in the audit log.`, { kind: 'error' });
      return;
    }
    this.openDetail(e);
  }

  /** findEvent fetches one event by its id (audit.query's id filter); null when it is not there. */
  async findEvent(id) {
    const p = await this.rpc.call('audit.query', { id, limit: 1 });
    return p.events.find((x) => x.id === id) || null;
  }

  openDetail(e) {
    if (!e) return;
    this.detailId = e.id;
    const dlg = $('#detail');
    $('#detail-title').textContent = `${opName(e.op)} · ${decisionNames[e.decision] || e.decision}`;
    const by = decidedBy(e);
    const outcome = e.decision === 'allow' ? 'Corral allowed it.' : e.decision === 'deny' ? 'Corral refused it.' : 'It was allowed but did not work.';
    const fileBox = h('div', { class: 'file-box', 'aria-live': 'polite' });
    const changeBox = h('div', { class: 'change-box', id: 'detail-changes', 'aria-live': 'polite' });
    const filterBtn = (label, patch) => {
      const b = h('button', { type: 'button', class: 'btn small' }, label);
      b.addEventListener('click', () => {
        Object.assign(this.f, patch);
        dlg.close();
        this.apply();
      });
      return b;
    };
    const fields = [
      ['Event number', String(e.id)],
      ['Time', `${full(e.time)} (${e.time})`],
      ['Agent', e.client],
      ['Folder', eventScope(e)],
      ['Action', `${opName(e.op)} (${e.op})`],
      ['Target', e.target || '—'],
      ['Decision', decisionNames[e.decision] || e.decision],
      ['Decided by', `${by[0]} (${e.decided_by})`],
      ['Detail', e.detail || '—'],
      ['Size', e.bytes ? `${size(e.bytes)} (${plural(e.bytes, 'byte')})` : '—'],
      ['Duration', `${num(e.duration_ms)} ms`],
      ['Error', e.error || '—'],
    ];
    $('#detail-body').replaceChildren(
      h('p', { class: 'sentence' }, `${when(e.time)}: `, h('strong', null, e.client), ` — ${opName(e.op).toLowerCase()}`,
        e.target ? [' ', h('code', null, e.target)] : null, `${scopePhrase(e)}. ${outcome}`),
      h('div', { class: `decided ${e.decision}` },
        h('strong', null, `How it was decided: ${by[0]}`), h('span', null, by[1]),
        e.detail ? h('div', null, `Detail: ${e.detail}`) : null,
        e.error ? h('div', null, `Error: ${e.error}`) : null),
      fileBox,
      changeBox,
      h('h3', null, 'Every field'),
      h('dl', { class: 'fields' }, fields.map(([k, v]) => [h('dt', null, k), h('dd', null, v)])),
      h('h3', null, 'Show similar'),
      h('div', { class: 'detail-actions' },
        filterBtn('Only this agent', { client: e.client }),
        filterBtn('Only this action', { op: e.op }),
        e.target ? filterBtn('Same target', { text: e.target }) : null),
    );
    if (!dlg.open) dlg.showModal();
    this.fileLinks(e, fileBox);
    if (e.changes?.length) this.changes(e, changeBox);
  }

  /**
   * changes shows what the event changed, as undoing it would put it
   * back (undo.preview: a diff for text, sizes for binary), with Undo
   * for the whole event and Restore for one file's earlier version.
   * Conflicts (a file changed again since) are named, never overwritten.
   */
  async changes(e, box) {
    box.replaceChildren(h('h3', null, 'What it changed'), h('p', { class: 'muted small' }, 'Reading the files as they are now…'));
    let pre;
    try {
      pre = await this.rpc.call('undo.preview', { event_id: e.id });
    } catch (err) {
      box.replaceChildren(h('h3', null, 'What it changed'), h('p', { class: 'muted small' }, err.message));
      return;
    }
    const kinds = { created: 'created', modified: 'changed', deleted: 'deleted', moved: 'moved' };
    const actions = { restore: 'would get its earlier content back', remove: 'would be removed', move_back: 'would move back', none: 'is already as it was' };
    const status = h('p', { class: 'small', role: 'status' });
    const byPath = new Map(e.changes.map((c) => [c.path, c]));
    const items = pre.files.map((f) => {
      const c = byPath.get(f.path) || {};
      const what = h('div', null, h('code', null, visible(f.path)), ` — ${kinds[f.kind] || f.kind}`,
        f.from ? [' from ', h('code', null, visible(f.from))] : null, `; undoing ${actions[f.action] || f.action}.`);
      let body = null;
      if (f.conflict) body = h('p', { class: 'conflict' }, f.conflict);
      else if (f.diff) body = h('pre', { class: 'diff' }, f.diff.split('\n').map((l) => h('span', { class: l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : '' }, l + '\n')));
      else if (f.action !== 'none') body = h('p', { class: 'muted small' }, `${f.binary ? 'Binary file: ' : ''}${size(f.size_now)} now, ${size(f.size_after)} after the undo.`);
      let restore = null;
      if (c.version && f.kind !== 'created') {
        restore = h('button', { type: 'button', class: 'btn small' }, 'Restore this file');
        confirmButton(restore, 'Click again to restore', async () => {
          try {
            await this.rpc.call('version.restore', { path: c.path, version: c.version, context: scopeContext(e.user) });
            status.textContent = `${c.path} has its content from before this event again.`;
          } catch (err) {
            status.textContent = err.message;
          }
        });
      }
      return h('li', { class: f.conflict ? 'change conflict' : 'change' }, what, body, restore);
    });
    const undo = h('button', { type: 'button', class: 'btn primary', id: 'undo-event' }, 'Undo this');
    confirmButton(undo, 'Click again to undo', async () => {
      try {
        const r = await this.rpc.call('undo.apply', { event_id: e.id });
        status.textContent = `Undone: ${plural(r.files.filter((f) => f.action !== 'none').length, 'file')} put back (event ${r.undo_event}, which can itself be undone).`;
        toast('Undone.');
      } catch (err) {
        status.textContent = err.kind === 'conflict'
          ? `Nothing was undone: ${err.message} Files changed again since are listed above; undo them one by one, or restore single files.`
          : err.message;
      }
    });
    box.replaceChildren(h('div', null, h('h3', null, 'What it changed'),
      pre.conflicts ? h('p', { class: 'conflict' }, `${plural(pre.conflicts, 'file')} changed again after this event; Corral will not overwrite ${pre.conflicts === 1 ? 'it' : 'them'}.`) : null,
      h('ul', { class: 'changes' }, items),
      h('div', { class: 'detail-actions' }, undo), status));
  }

  /** fileLinks offers to open the event's file when it is still a file in a scope. */
  async fileLinks(e, box) {
    const t = e.target || '';
    // A refused path is not offered: Corral would not open it (a hard link,
    // a pipe) or it is not the agent's to open.
    if (!PATH_OPS.has(e.op) || !t || t.startsWith('/') || t.startsWith('~') || !e.user || e.decision === 'deny') return;
    box.replaceChildren(h('p', { class: 'muted small' }, 'Checking whether it is still there…'));
    try {
      const st = await this.rpc.call('file.stat', { path: t, context: scopeContext(e.user) });
      if (st.type === 'file') {
        const open = h('button', { type: 'button', class: 'btn primary', onclick: () => openFile(this.rpc, e.user, st.path) }, 'Open file');
        const share = h('button', { type: 'button', class: 'btn', onclick: () => shareDialog(this.rpc, e.user, st.path) }, 'Make a link…');
        box.replaceChildren(h('h3', null, 'The file'),
          h('p', { class: 'muted small' }, `${st.path} · ${size(st.size)} · changed ${full(st.modified)}`),
          h('div', { class: 'file-actions' }, open, share));
      } else if (st.type === 'dir') {
        const browse = h('a', { class: 'btn', href: `#files?${new URLSearchParams({ scope: e.user, path: st.path })}` }, 'Show in Files');
        browse.addEventListener('click', () => $('#detail').close());
        box.replaceChildren(h('h3', null, 'The folder'), h('div', { class: 'file-actions' }, browse));
      } else {
        box.replaceChildren();
      }
    } catch (err) {
      box.replaceChildren(h('p', { class: 'muted small' }, err.kind === 'not_found' ? 'It is no longer there.' : ''));
    }
  }

  // ---------- export ----------

  async export(kind) {
    $('#export-menu').open = false;
    if (this.exporting) return;
    this.exporting = true;
    this.exportCancel = false;
    const status = $('#export-status'), text = $('#export-text');
    status.hidden = false;
    const q = this.serverFilter(Date.now());
    const parts = [];
    const cols = ['id', 'time', 'client', 'user', 'op', 'target', 'decision', 'decided_by', 'detail', 'bytes', 'duration_ms', 'error'];
    if (kind === 'csv') parts.push(`${cols.join(',')}\r\n`);
    let n = 0, cursor = '';
    try {
      do {
        const page = await this.rpc.call('audit.query', { ...q, limit: 1000, ...(cursor ? { cursor } : {}) });
        for (const e of page.events) {
          parts.push(kind === 'csv' ? `${cols.map((c) => csvCell(e[c])).join(',')}\r\n` : `${JSON.stringify(e)}\n`);
        }
        n += page.events.length;
        cursor = page.next_cursor || '';
        text.textContent = `Exporting… ${plural(n, 'event')} so far.`;
      } while (cursor && !this.exportCancel);
      if (this.exportCancel) {
        toast('Export cancelled.');
        return;
      }
      const blob = new Blob(parts, { type: kind === 'csv' ? 'text/csv;charset=utf-8' : 'application/x-ndjson' });
      const url = URL.createObjectURL(blob);
      const stamp = isoSeconds(Date.now()).replace(/[-:]/g, '').replace('T', '-').replace('Z', '');
      follow({ href: url, download: `corral-audit-${stamp}.${kind}` });
      setTimeout(() => URL.revokeObjectURL(url), 60e3);
      toast(`Exported ${plural(n, 'event')}.`);
    } catch (e) {
      toast(e.message, { kind: 'error' });
    } finally {
      this.exporting = false;
      status.hidden = true;
    }
  }
}

/** csvCell quotes a value for CSV and defuses spreadsheet formulas an agent could plant. */
function csvCell(v) {
  let s = v === null || v === undefined ? '' : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
