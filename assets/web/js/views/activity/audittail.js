// The audit log's live tail: events from audit.subscribe that match the
// filter appear on top of the table as they happen. Every event, shown
// or not, also tells the rest of the dashboard what changed (rules, the
// pause) and updates its row when the table shows it (a command that ended).
import { $ } from '../../lib/dom/h.js';

export class Tail {
  /** view is the activity: its rows, its filter test and its chart. */
  constructor(view) {
    this.view = view;
    this.on = false;
    view.rpc.on('audit.event', ({ event }) => this.event(event));
    $('#live').addEventListener('click', () => this.set(!this.on));
  }

  /** set turns the tail on or off; write also records it in the URL and starts from what is there now. */
  set(on, write = true) {
    this.on = on;
    $('#live').setAttribute('aria-pressed', String(on));
    if (write) {
      const v = this.view;
      v.writeURL();
      v.afterPage();
      if (on) v.reload();
    }
  }

  event(e) {
    const v = this.view;
    if (e.op === 'rule.create' || e.op === 'rule.revoke' || e.op === 'rule.update') v.app.rulesChanged();
    if (e.op === 'agents.pause' || e.op === 'agents.resume') v.app.refreshInfo();
    v.filters.addClients([e.client]);
    if (v.rows.update(e)) return;
    if (!this.on || !v.loaded || !v.matches(e)) return;
    if (!v.rows.place(e, !v.cursor)) return;
    v.afterPage();
    v.chart.later();
  }
}
