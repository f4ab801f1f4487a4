// An audit event's detail: what happened in a sentence, how it was
// decided, every field, the file it names (open it, make a link), what it
// changed (undo it, restore one file) and "show similar" filters. Opened
// from a row or by "#event=ID" (the tray's Recent activity).
import { h, $, visible } from '../../lib/dom/h.js';
import { when, full, size, plural, num } from '../../lib/dom/format.js';
import { opIn, opName, decisionName, decidedBy, answered, eventScope, scopePhrase, who } from '../../lib/dom/names.js';
import { toast, confirmButton } from '../../lib/dom/ui.js';
import { openFile, shareDialog, scopeContext } from '../../lib/links.js';
import { commandLink } from '../../lib/netlabels.js';

export class Detail {
  /** view is the activity: its rows, and narrow(patch) to filter by a field of the event. */
  constructor(view) {
    this.view = view;
    this.rpc = view.rpc;
    this.wanted = 0; // the latest "#event=ID" asked for
    this.id = 0; // the event the detail shows
    // Back to the event's row, when the table shows it (an event opened by
    // "#event=ID" may not be on the page).
    $('#detail').addEventListener('close', () => view.rows.focus(this.id));
  }

  /**
   * openEvent shows the detail of event id ("#event=ID", from the tray's
   * Recent activity), from the table when it is there, else from the log.
   */
  async openEvent(id) {
    const want = ++this.wanted;
    await this.view.app.infoReady; // the detail names the action in the server's words
    let e = this.view.rows.get(id);
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
    this.open(e);
  }

  /** findEvent fetches one event by its id (audit.query's id filter); null when it is not there. */
  async findEvent(id) {
    const p = await this.rpc.call('audit.query', { id, limit: 1 });
    return p.events.find((x) => x.id === id) || null;
  }

  open(e) {
    if (!e) return;
    this.id = e.id;
    const dlg = $('#detail');
    $('#detail-title').textContent = `${opName(e.op)} · ${decisionName(e.decision)}`;
    const by = decidedBy(e);
    const outcome = e.decision === 'allow' ? 'Corral allowed it.' : e.decision === 'deny' ? 'Corral refused it.' : 'It was allowed but did not work.';
    const fileBox = h('div', { class: 'file-box', 'aria-live': 'polite' });
    const changeBox = h('div', { class: 'change-box', id: 'detail-changes', 'aria-live': 'polite' });
    const filterBtn = (label, patch) => {
      const b = h('button', { type: 'button', class: 'btn small' }, label);
      b.addEventListener('click', () => {
        dlg.close();
        this.view.narrow(patch);
      });
      return b;
    };
    const fields = [
      ['Event number', String(e.id)],
      ['Time', `${full(e.time)} (${e.time})`],
      ['Who', who(e.client)],
      ['Folder', eventScope(e)],
      ['Action', `${opName(e.op)} (${e.op})`],
      ['Target', e.target || '—'],
      ['Decision', decisionName(e.decision)],
      ['Decided by', `${by[0]} (${e.decided_by})`],
      ['Rule', e.rule || '—'],
      ['Answer', e.answer ? `${answered(e)} (${e.answer}, ${e.answered_by || '—'})` : '—'],
      ['Detail', e.detail || '—'],
      ['Size', e.bytes ? `${size(e.bytes)} (${plural(e.bytes, 'byte')})` : '—'],
      ['Duration', `${num(e.duration_ms)} ms`],
      ['Error', e.error || '—'],
    ];
    $('#detail-body').replaceChildren(
      h('p', { class: 'sentence' }, `${when(e.time)}: `, h('strong', null, who(e.client)), ` — ${opName(e.op).toLowerCase()}`,
        e.target ? [' ', h('code', null, e.target)] : null, `${scopePhrase(e)}. ${outcome}`),
      h('div', { class: `decided ${e.decision}` },
        h('strong', null, `How it was decided: ${by[0]}`), h('span', null, by[1]),
        e.answer ? h('div', { class: 'answered', id: 'detail-answered' }, `${answered(e)}.`) : null,
        e.rule ? h('div', null, h('a', {
          id: 'detail-rule', href: `#rules?${new URLSearchParams({ rule: e.rule })}`, onclick: () => $('#detail').close(),
        }, e.decided_by === 'rule' ? 'Show the rule on the Rules page' : 'Show the rule this answer made')) : null,
        e.detail ? h('div', null, 'Detail: ', this.detailText(e.detail)) : null,
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

  /** detailText is an event's detail, with "for command N" a link opening that command's event (netlabels.js). */
  detailText(detail) {
    const c = commandLink(detail);
    if (!c) return detail;
    return [c.before, h('a', { href: `#event=${c.id}`, class: 'command-link', title: `Open event ${c.id}, the command` }, c.label), c.after];
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
    if (!opIn('path', e.op) || !t || t.startsWith('/') || t.startsWith('~') || !e.user || e.decision === 'deny') return;
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
}
