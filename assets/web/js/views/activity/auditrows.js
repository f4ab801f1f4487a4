// The audit log's table: one row per event, kept with its event so a
// click, Enter or Space opens the detail, and arrow keys move between
// rows. A command's event comes twice (when it starts and, under the same
// id, when it ends): the row is updated in place.
import { h, $, visible } from '../../lib/dom/h.js';
import { when, full, plural } from '../../lib/dom/format.js';
import { opIn, opName, decisionName, decidedBy, eventScope, who } from '../../lib/dom/names.js';
import { confirmButton } from '../../lib/dom/ui.js';
import { levelData } from '../../lib/levels.js';

/** exitCode is a finished command's exit status from its event's detail, or null. */
export function exitCode(e) {
  if (!opIn('command', e.op)) return null;
  const m = /(?:^|; )exit (\d+)(?:;|$)/.exec(e.detail || '');
  return m ? Number(m[1]) : null;
}

/** timeKey orders event times to the nanosecond: [ms of the whole second, ns within it]. */
function timeKey(iso) {
  const frac = /\.(\d+)/.exec(iso)?.[1] || '';
  return [Date.parse(iso.replace(/\.\d+/, '')), Number(frac.padEnd(9, '0').slice(0, 9))];
}

/** before reports whether event a comes above b in the table: the server's order, later time first, then higher id. */
export function before(a, b) {
  const [x, y] = [timeKey(a.time), timeKey(b.time)];
  if (x[0] !== y[0]) return x[0] > y[0];
  if (x[1] !== y[1]) return x[1] > y[1];
  return a.id > b.id;
}

/** undoable reports whether a row offers Undo: an allowed event that changed files. */
export const undoable = (e) => e.decision === 'allow' && (e.changes || []).length > 0;

export class Rows {
  /**
   * onOpen(e) opens an event's detail; onClient(name) learns an agent's
   * name; undo(e), when given, undoes an event (undo.apply) for the Undo
   * in the row of every event that changed files, while mayUndo() holds
   * (a paired phone may not undo).
   */
  constructor(onOpen, onClient, undo, mayUndo = () => true) {
    this.onClient = onClient;
    this.undo = undo;
    this.mayUndo = mayUndo;
    this.tbody = $('#audit-table tbody');
    this.events = new Map(); // id → event, for rows on the page
    this.tbody.addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-id]');
      if (tr) onOpen(this.events.get(Number(tr.dataset.id)));
    });
    this.tbody.addEventListener('keydown', (e) => {
      const tr = e.target.closest('tr[data-id]');
      if (!tr || e.target.closest('button')) return;
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); onOpen(this.events.get(Number(tr.dataset.id))); }
      else if (e.key === 'ArrowDown') { e.preventDefault(); tr.nextElementSibling?.focus(); }
      else if (e.key === 'ArrowUp') { e.preventDefault(); tr.previousElementSibling?.focus(); }
    });
  }

  get size() { return this.events.size; }
  has(id) { return this.events.has(id); }
  get(id) { return this.events.get(id); }

  /** replace shows events instead of what the table had. */
  replace(events) {
    this.events.clear();
    this.tbody.replaceChildren(...events.map((e) => this.row(e)));
  }

  /** append adds older events below, leaving out any already shown. */
  append(events) {
    this.tbody.append(...events.filter((e) => !this.events.has(e.id)).map((e) => this.row(e)));
  }

  /**
   * place puts an event that arrived since the table was loaded where its
   * time puts it (an event whose approval waited is older than the events
   * recorded meanwhile), marked as new. Below the last row it goes only
   * when the table is complete; otherwise a later page brings it.
   */
  place(e, complete) {
    for (const tr of this.tbody.children) {
      const there = this.events.get(Number(tr.dataset.id));
      if (there && before(e, there)) {
        tr.before(this.freshRow(e));
        return true;
      }
    }
    if (!complete) return false;
    this.tbody.append(this.freshRow(e));
    return true;
  }

  /** update replaces a shown event's row (a command that ended); false when it is not shown. */
  update(e) {
    if (!this.events.has(e.id)) return false;
    const old = this.tbody.querySelector(`tr[data-id="${e.id}"]`);
    if (old) {
      const tr = this.row(e);
      tr.classList.toggle('fresh', old.classList.contains('fresh'));
      old.replaceWith(tr);
    }
    return true;
  }

  /** top is the event on the top row, or undefined. */
  top() {
    return this.events.get(Number(this.tbody.querySelector('tr[data-id]')?.dataset.id));
  }

  /** focus puts the focus on event id's row, when it is shown. */
  focus(id) {
    this.tbody.querySelector(`tr[data-id="${id}"]`)?.focus();
  }

  busy(on) {
    if (on) this.tbody.setAttribute('aria-busy', 'true');
    else this.tbody.removeAttribute('aria-busy');
  }

  row(e) {
    this.events.set(e.id, e);
    this.onClient(e.client);
    const by = decidedBy(e)[2];
    const exit = exitCode(e);
    return h('tr', { tabindex: '0', dataset: { id: String(e.id), decision: e.decision } },
      h('td', { class: 't-time', title: full(e.time) }, when(e.time)),
      h('td', { class: 't-client', dataset: levelData(e.client) }, who(e.client)),
      h('td', { class: 't-user' }, eventScope(e)),
      h('td', { class: 't-op', title: e.op }, opName(e.op)),
      h('td', { class: 't-target', title: e.target }, e.target || '—'),
      h('td', { class: 't-result' },
        h('span', { class: `pill ${e.decision}` }, decisionName(e.decision)),
        by ? h('span', { class: 't-by' }, by) : null,
        exit ? h('span', { class: 'pill exit-bad', title: 'The command ended with an error status' }, `exit ${exit}`) : null,
        this.undo && undoable(e) && this.mayUndo() ? this.undoButton(e) : null));
  }

  /** undoButton undoes the row's event after a second click, without opening its detail. */
  undoButton(e) {
    const n = e.changes.length;
    const btn = h('button', { type: 'button', class: 'btn small row-undo', 'data-act': 'undo', 'aria-label': `Undo ${opName(e.op)} (${plural(n, 'file')})` }, 'Undo');
    confirmButton(btn, 'Sure? Undo', async () => {
      try {
        const r = await this.undo(e);
        btn.replaceWith(h('span', { class: 't-by row-undone', role: 'status' }, `undone: ${plural(r.files.filter((f) => f.action !== 'none').length, 'file')} put back`));
      } catch (err) {
        btn.replaceWith(h('span', { class: 't-by conflict', role: 'status' }, `not undone: ${visible(err.message)}`));
      }
    });
    btn.addEventListener('click', (ev) => ev.stopPropagation()); // the row's click opens the detail
    return btn;
  }

  /** freshRow is a row marked as new since the table was loaded. */
  freshRow(e) {
    const tr = this.row(e);
    tr.classList.add('fresh');
    return tr;
  }
}
