// The audit log view: the filter (auditfilter.js) kept in the URL, the
// activity chart (auditchart.js), the table (auditrows.js) paged by
// keyset cursor as the owner scrolls, an event's detail (auditdetail.js),
// the live tail (audittail.js) and export (auditexport.js). Coming back
// to the view from another one brings the table up to date.
import { $, visible } from '../../lib/dom/h.js';
import { decisions } from '../../lib/dom/names.js';
import { isoSeconds, plural, num } from '../../lib/dom/format.js';
import { toast } from '../../lib/dom/ui.js';
import { KEYS, DAY, blankFilter, serverFilter, matches, knownRange, FilterForm } from './auditfilter.js';
import { Rows, before } from './auditrows.js';
import { ActivityChart } from './auditchart.js';
import { Detail } from './auditdetail.js';
import { Tail } from './audittail.js';
import { Export } from './auditexport.js';
import { View } from '../../lib/view.js';

const PAGE = 100;

export class Activity extends View {
  constructor(app) {
    super(app);
    this.f = blankFilter();
    this.query = null;
    this.gen = 0;
    this.cursor = '';
    this.loading = false;
    this.loaded = false;
    this.hash = null;
    this.pages = 0; // pages of the table loaded since the last reload
    this.away = false; // another view was shown since the table was loaded

    this.summary = $('#audit-summary');
    this.more = $('#load-more');
    this.end = $('#audit-end');
    this.emptyEl = $('#audit-empty');
    this.filters = new FilterForm((f, force) => this.setFilter(f, force));
    this.rows = new Rows((e) => this.detail.open(e), (name) => this.filters.addClients([name]), (e) => this.rpc.call('undo.apply', { event_id: e.id }), () => !this.app.device);
    this.chart = new ActivityChart(this);
    this.detail = new Detail(this);
    this.tail = new Tail(this);
    new Export(this.rpc, () => serverFilter(this.f, Date.now())); // eslint-disable-line no-new

    this.more.addEventListener('click', () => this.loadMore());
    new IntersectionObserver((entries) => {
      if (entries.some((x) => x.isIntersecting)) this.loadMore();
    }, { rootMargin: '600px 0px' }).observe($('#audit-more'));
  }

  get live() { return this.tail.on; }

  /** vocabulary is called when session.info brought the server's operations and decisions. */
  vocabulary() {
    this.filters.fillChoices(this.f.op);
    this.filters.show(this.f);
  }

  setScopes(scopes) { this.filters.setScopes(scopes, this.f.user); }
  addClients(names) { this.filters.addClients(names); }
  openEvent(id) { return this.detail.openEvent(id); }

  // ---------- the filter and the URL ----------

  /** setFilter takes a filter from the form; force applies it even when unchanged. */
  setFilter(f, force) {
    if (!force && KEYS.every((k) => f[k] === this.f[k])) return;
    this.f = f;
    this.apply();
  }

  /** narrow adds patch to the filter ("show similar" in the detail). */
  narrow(patch) {
    Object.assign(this.f, patch);
    this.apply();
  }

  params() {
    const p = new URLSearchParams();
    for (const k of KEYS) {
      if (!this.f[k]) continue;
      if ((k === 'since' || k === 'until') && this.f.range !== 'custom') continue;
      if (k === 'ops' && this.f.op !== 'several') continue;
      p.set(k, this.f[k]);
    }
    if (this.chart.bucket !== 'hour') p.set('bucket', this.chart.bucket);
    if (this.live) p.set('live', '1');
    return p;
  }

  writeURL() {
    const q = this.params().toString();
    this.hash = `#activity${q ? `?${q}` : ''}`;
    if (location.hash !== this.hash) history.replaceState(null, '', this.hash);
    this.app.setActivityHash(this.hash);
  }

  /** enter shows the table the hash's query asks for, or catches up with the one loaded. */
  enter(params) {
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
    if (f.range && f.range !== 'custom' && !knownRange(f.range)) f.range = '';
    this.f = f;
    this.chart.bucket = params.get('bucket') === 'day' ? 'day' : 'hour';
    this.tail.set(params.get('live') === '1', false);
    if (f.op) this.filters.fillChoices(f.op);
    if (f.user) this.setScopes([]);
    this.apply();
  }

  /** leave: the table loaded stays, to catch up with when shown again. */
  leave() {
    if (this.loaded) this.away = true;
  }

  apply() {
    this.filters.show(this.f);
    this.writeURL();
    this.reload();
  }

  matches(e) {
    return matches(this.query, this.f, e, this.app.info?.housekeeping);
  }

  pickTime(from, to) {
    this.f.range = 'custom';
    this.f.since = isoSeconds(from);
    this.f.until = isoSeconds(to);
    if (this.chart.bucket === 'day' && to - from <= DAY) this.chart.bucket = 'hour';
    this.apply();
  }

  // ---------- loading ----------

  reconnected() {
    this.rpc.call('audit.subscribe').catch(() => {});
    if (this.loaded) this.reload();
  }

  async reload() {
    const gen = ++this.gen;
    this.cursor = '';
    this.loading = true;
    this.summary.textContent = 'Loading…';
    this.rows.busy(true);
    // The table and the filter's menus use the server's words: wait for them.
    await this.app.infoReady;
    if (gen !== this.gen) return;
    if (this.f.decision && !decisions().includes(this.f.decision)) {
      this.f.decision = '';
      this.filters.show(this.f);
      this.writeURL();
    }
    const now = Date.now();
    this.query = serverFilter(this.f, now);
    const rows = this.rpc.call('audit.query', { ...this.query, limit: PAGE });
    const chart = this.chart.load(gen, now);
    try {
      const page = await rows;
      if (gen !== this.gen) return;
      performance.mark('corral:rows-data');
      this.rows.replace(page.events);
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
        this.rows.busy(false);
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

  async loadMore() {
    if (this.loading || !this.cursor || !this.loaded) return;
    const gen = this.gen;
    this.loading = true;
    this.more.disabled = true;
    try {
      const page = await this.rpc.call('audit.query', { ...this.query, cursor: this.cursor, limit: PAGE });
      if (gen !== this.gen) return;
      this.rows.append(page.events);
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
   * so the new events are put where their time puts them instead, as
   * the live tail would.
   */
  async catchUp() {
    if (this.live) return;
    if (this.pages <= 1) {
      this.reload();
      return;
    }
    const gen = this.gen;
    const top = this.rows.top();
    try {
      const page = await this.rpc.call('audit.query', { ...this.query, limit: PAGE });
      if (gen !== this.gen) return;
      // New since: on top, and (an approval that waited) among the rows.
      const fresh = page.events.filter((e) => !this.rows.has(e.id));
      if (fresh.filter((e) => !top || before(e, top)).length === page.events.length && page.next_cursor) {
        this.reload(); // more new events than a page: start from the newest
        return;
      }
      for (const e of fresh) this.rows.place(e, !this.cursor);
      this.afterPage();
      if (fresh.length) this.chart.reload();
    } catch (e) {
      if (gen === this.gen && e.kind !== 'io') toast(e.message, { kind: 'error' });
    }
  }

  afterPage() {
    const n = this.rows.size;
    this.emptyEl.hidden = n > 0;
    this.more.hidden = !this.cursor;
    this.end.hidden = !!this.cursor || n === 0;
    const filtered = Object.keys(this.query || {}).length > 0;
    this.summary.textContent = n === 0 ? ''
      : `${this.cursor ? `Showing the newest ${num(n)}` : `${plural(n, 'event')}`}${filtered ? ' matching the filters' : ''}${this.cursor ? ' — scroll for more' : ''}.${this.live ? ' Live: new events appear at the top.' : ''}`;
  }
}
