// Export of the audit log: every event matching the filter, paged through
// audit.query, as CSV or JSON Lines, with a cancel button.
import { $, $$ } from '../../lib/dom/h.js';
import { isoSeconds, plural } from '../../lib/dom/format.js';
import { toast, follow } from '../../lib/dom/ui.js';

export class Export {
  /** query() returns the audit.query parameters of the current filter. */
  constructor(rpc, query) {
    this.rpc = rpc;
    this.query = query;
    for (const b of $$('[data-export]')) b.addEventListener('click', () => this.run(b.dataset.export));
    $('#export-cancel').addEventListener('click', () => { this.cancel = true; });
  }

  async run(kind) {
    $('#export-menu').open = false;
    if (this.exporting) return;
    this.exporting = true;
    this.cancel = false;
    const status = $('#export-status'), text = $('#export-text');
    status.hidden = false;
    const q = this.query();
    const parts = [];
    const cols = ['id', 'time', 'client', 'user', 'op', 'target', 'decision', 'decided_by', 'detail', 'bytes', 'duration_ms', 'error', 'answer', 'answered_by', 'rule'];
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
      } while (cursor && !this.cancel);
      if (this.cancel) {
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
