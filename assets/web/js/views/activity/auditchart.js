// The audit log's activity chart: events per hour or per day for the
// filter's time range (audit.stats), from which a drag picks a range.
import { $, $$ } from '../../lib/dom/h.js';
import { full, isoSeconds } from '../../lib/dom/format.js';
import { toast } from '../../lib/dom/ui.js';
import { Chart } from './chart.js';
import { HOUR, DAY, knownRange } from './auditfilter.js';

export class ActivityChart {
  /** view is the activity: its query, its filter and its generation; pickTime(from, to) narrows the time. */
  constructor(view) {
    this.view = view;
    this.rpc = view.rpc;
    this.bucket = 'hour';
    this.el = $('#chart');
    this.chart = new Chart(this.el, $('#chart-readout'), (from, to) => view.pickTime(from, to));
    for (const b of $$('[data-bucket]')) {
      b.addEventListener('click', () => {
        this.bucket = b.dataset.bucket;
        view.writeURL();
        this.reload();
      });
    }
  }

  span(now) {
    const q = this.view.query;
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
    else if (knownRange(this.view.f.range)) label = $('#f-range').selectedOptions[0]?.textContent || '';
    else label = `${full(start)} – ${full(end)}`;
    return { start: Math.floor(start / step) * step, end, step, label };
  }

  async load(gen, now) {
    const span = this.span(now);
    const query = this.view.query;
    $('#h-chart').textContent = span.step === DAY ? 'Events per day' : 'Events per hour';
    $('#chart-span').textContent = span.label;
    for (const b of $$('[data-bucket]')) b.setAttribute('aria-pressed', String(b.dataset.bucket === (span.step === DAY ? 'day' : 'hour')));
    const params = { ...query, since: isoSeconds(span.start), bucket: span.step === DAY ? 'day' : 'hour' };
    if (!query.until) delete params.until;
    this.el.classList.add('loading');
    try {
      const r = await this.rpc.call('audit.stats', params);
      if (gen !== this.view.gen) return;
      performance.mark('corral:chart-data');
      this.chart.set(r.buckets, span.start, span.end, span.step);
      performance.mark('corral:chart');
    } catch (e) {
      if (e.kind !== 'io' && e.kind !== 'forbidden') toast(e.message, { kind: 'error' });
    } finally {
      this.el.classList.remove('loading');
    }
  }

  reload() {
    this.load(this.view.gen, Date.now());
  }

  /** later reloads the chart after a quiet moment (events arriving one by one). */
  later() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), 2000);
  }
}
