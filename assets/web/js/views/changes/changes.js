// "What changed": every file the agents (all of them, or one) changed in
// a time range (last hour, today, yesterday, last 7 days), read from
// undo.client's dry run, so each file shows what undoing would do — a
// diff for text, sizes for binary files, and a conflict in plain words
// when the file changed again since. A file changed by several calls
// counts once. Each call is a group with one action: "Undo this command"
// (or "Undo this change"); a folder the call deleted that is gone now
// offers "Restore this folder" (undo.apply with folder). After any undo
// the list is read again, so what is back no longer offers a restore.
// One button undoes all of it (after a second click). The agent list
// follows agents added meanwhile (agent.* events on the audit stream).
// The header shows the version store's size (versions.usage). The agent
// and range live in the URL (#changes?client=NAME&range=today; no
// client: all agents).
import { h, $, visible } from '../../lib/dom/h.js';
import { when, size, isoSeconds, plural, ago } from '../../lib/dom/format.js';
import { opName, opIn, scopeName } from '../../lib/dom/names.js';
import { toast, confirmButton } from '../../lib/dom/ui.js';
import { View } from '../../lib/view.js';

const RANGES = ['1h', 'today', 'yesterday', '7d'];
const HOUR = 3600e3, DAY = 864e5;
const kinds = { created: 'created', modified: 'changed', deleted: 'deleted', moved: 'moved' };
const actions = { restore: 'undoing puts its earlier content back', remove: 'undoing removes it', move_back: 'undoing moves it back', none: 'it is already as it was' };

/** span turns a range name into [since, until] (until 0: up to now), in local days. */
export function span(range, now = Date.now()) {
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  const m = midnight.getTime();
  switch (range) {
    case 'today': return [m, 0];
    case 'yesterday': {
      const y = new Date(m);
      y.setDate(y.getDate() - 1); // a day need not be 24 hours
      return [y.getTime(), m];
    }
    case '7d': return [now - 7 * DAY, 0];
    default: return [now - HOUR, 0];
  }
}

/** days says a Go duration ("720h0m0s") in words. */
function days(d) {
  const hours = Number(/^(\d+)h/.exec(d || '')?.[1] || 0);
  if (hours >= 48) return plural(Math.round(hours / 24), 'day');
  return hours ? plural(hours, 'hour') : d;
}

/** fileCount counts the distinct files of undo.client's events (a file changed by two calls counts once). */
export function fileCount(events) {
  return new Set(events.flatMap((ev) => ev.files.map((f) => `${ev.user}\u0000${f.path}`))).size;
}

/** undone reports whether undoing an event would change nothing any more (it is already as it was). */
const undone = (ev) => ev.files.length > 0 && ev.files.every((f) => f.action === 'none' && !f.conflict);

/** FOLD: a group with more files than this shows them folded. */
const FOLD = 3;

export class Changes extends View {
  constructor(app) {
    super(app);
    this.clients = [];
    this.client = '';
    this.range = 'today';
    this.gen = 0;
    this.message = ''; // what the last undo did, kept across the reload after it
    this.list = $('#wc-list');
    this.summary = $('#wc-summary');
    $('#wc-form').addEventListener('submit', (e) => e.preventDefault());
    $('#wc-agent').addEventListener('change', () => { this.client = $('#wc-agent').value; this.message = ''; this.go(); this.usage(); });
    $('#wc-range').addEventListener('change', () => { this.range = $('#wc-range').value; this.message = ''; this.go(); });
    // An agent added, renamed or removed in any tab: the list follows.
    this.rpc.on('audit.event', ({ event }) => {
      if (/^agent\.(add|remove|update)$/.test(event.op) && event.decision === 'allow') this.refreshClients();
    });
  }

  async refreshClients() {
    try {
      const r = await this.rpc.call('client.list');
      this.setClients((r.clients || []).map((c) => c.name));
    } catch { /* the next connection fills it */ }
  }

  /** setClients fills the agent list from client.list. */
  setClients(names) {
    this.clients = names;
    this.fillAgents();
  }

  fillAgents() {
    const sel = $('#wc-agent');
    const names = [...this.clients];
    if (this.client && !names.includes(this.client)) names.push(this.client);
    sel.replaceChildren(h('option', { value: '' }, 'All agents'), ...names.map((n) => h('option', { value: n }, n)));
    sel.value = this.client;
  }

  /** reconnected subscribes again while shown, and reloads what it missed. */
  reconnected() {
    if (this.visible) this.rpc.call('audit.subscribe').catch(() => {});
    super.reconnected();
  }

  enter(params) {
    this.rpc.call('audit.subscribe').catch(() => {});
    this.client = params.has('client') ? params.get('client') : this.client;
    const r = params.get('range');
    this.range = RANGES.includes(r) ? r : this.range;
    this.fillAgents();
    $('#wc-range').value = this.range;
    this.writeURL();
    this.usage();
    this.reload();
  }

  go() {
    this.writeURL();
    this.load();
  }

  writeURL() {
    const p = new URLSearchParams();
    if (this.client) p.set('client', this.client);
    p.set('range', this.range);
    const hash = `#changes?${p}`;
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }

  /** usage shows the version store's size, budget and oldest version,
   * and the chosen agent's part of it (its share). */
  async usage() {
    const el = $('#versions-usage');
    try {
      const u = await this.rpc.call('versions.usage');
      const mine = this.client ? (u.agents || []).find((a) => a.client === this.client) : null;
      el.textContent = `Kept versions: ${size(u.bytes)} of ${size(u.max_bytes)} (${plural(u.blobs, 'file')})`
        + (u.oldest ? `, the oldest from ${ago(u.oldest)}` : '')
        + `; kept for ${days(u.max_age)}, the oldest go first.`
        + (mine ? ` ${mine.client}'s versions take ${size(mine.bytes)} of its ${size(u.agent_share)} share`
          + (mine.refused ? `; ${plural(mine.refused, 'change')} refused because it was full.` : '.') : '');
      this.forgetButton(mine, u.agent_share);
    } catch (e) {
      el.textContent = e.kind === 'io' ? '' : visible(e.message);
    }
  }

  /** forgetButton offers to let go of an agent's versions when its share
   * is nearly full or has refused changes (versions.forget). */
  forgetButton(mine, share) {
    const box = $('#versions-forget');
    if (!mine || !mine.bytes || (!mine.refused && mine.bytes < share * 0.8)) {
      box.replaceChildren();
      box.hidden = true;
      return;
    }
    const who = mine.client;
    const btn = h('button', { type: 'button', class: 'btn', id: 'wc-forget' }, `Forget ${who}'s versions`);
    confirmButton(btn, `Click again: ${who}'s changes can then no longer be undone`, async () => {
      try {
        const r = await this.rpc.call('versions.forget', { client: who });
        toast(`Let go of ${plural(r.versions, 'version')} of ${who}'s changes (${size(r.bytes)}).`);
      } catch (err) {
        toast(visible(err.message));
      }
      this.usage();
      this.load();
    });
    box.replaceChildren(btn);
    box.hidden = false;
  }

  range2params() {
    const [since, until] = span(this.range);
    const p = { client: this.client, since: isoSeconds(since) };
    if (until) p.until = isoSeconds(until);
    return p;
  }

  async load() {
    const gen = ++this.gen;
    delete document.body.dataset.changesReady;
    if (!this.list.childElementCount) this.summary.textContent = 'Reading the files as they are now…';
    const params = this.range2params();
    let r;
    try {
      [r] = await Promise.all([this.rpc.call('undo.client', { ...params, dry_run: true }), this.app.infoReady]);
    } catch (e) {
      if (gen !== this.gen) return;
      this.summary.textContent = visible(e.message);
      this.list.replaceChildren();
      return;
    }
    if (gen !== this.gen) return;
    this.render(r, params);
    document.body.dataset.changesReady = String(gen);
  }

  /** done says what an undo did, and reads the list again. */
  done(message) {
    this.message = message;
    toast('Undone.');
    this.usage();
    this.load();
  }

  render(r, params) {
    const label = $('#wc-range').selectedOptions[0]?.textContent.toLowerCase() || '';
    const period = label === 'today' || label === 'yesterday' ? label : `in the ${label}`;
    const who = this.client || 'Your agents';
    const files = fileCount(r.events);
    const status = h('p', { class: 'small', role: 'status', id: 'wc-status' }, this.message);
    if (!files) {
      this.summary.textContent = `${who} changed no files ${period}.`;
      this.list.replaceChildren(status);
      return;
    }
    const agents = new Set(r.events.map((ev) => ev.client));
    this.summary.replaceChildren(h('span', null,
      h('span', null, `${who} changed ${plural(files, 'file')} in ${plural(r.events.length, 'call')} ${period}`
        + (!this.client && agents.size > 1 ? ` (${[...agents].join(', ')}).` : '.')),
      r.conflicts ? h('span', { class: 'conflict' }, ` ${plural(r.conflicts, 'file')} changed again since, by someone else; Corral will not overwrite ${r.conflicts === 1 ? 'it' : 'them'}.`) : null));

    const undo = h('button', { type: 'button', class: 'btn', id: 'wc-undo' }, 'Undo all of these');
    confirmButton(undo, `Click again to undo ${plural(files, 'change')}`, async () => {
      try {
        const done = await this.rpc.call('undo.client', { ...params });
        const n = done.events.reduce((k, ev) => k + ev.files.filter((f) => f.action !== 'none' && !f.conflict).length, 0);
        this.done(`Undone: ${plural(n, 'file')} put back. Each undo is an event in the activity, and can itself be undone.`);
      } catch (err) {
        status.textContent = err.kind === 'conflict'
          ? `Nothing was undone: ${err.message} The files are marked below; undo the other calls one by one.`
          : visible(err.message);
      }
    });

    const groups = r.events.map((ev) => this.group(ev, status));
    this.list.replaceChildren(
      h('div', { class: 'detail-actions' }, undo), status,
      h('ul', { class: 'wc-events' }, groups));
  }

  /** group is one call's changes under the call, with one action for all of them. */
  group(ev, status) {
    const command = opIn('command', ev.op);
    const head = h('p', { class: 'wc-head' },
      h('a', { href: `#event=${ev.event_id}` }, `${ev.time ? when(ev.time) : `Event ${ev.event_id}`}`),
      ` · ${ev.client} · ${opName(ev.op)}`,
      command && ev.target ? [' ', h('code', { class: 'wc-cmd', title: visible(ev.target) }, visible(ev.target))] : null,
      ` · ${plural(ev.files.length, 'file')}${ev.user ? ` in ${scopeName(ev.user)}` : ''}`);
    const actions = h('div', { class: 'wc-actions' });
    if (undone(ev)) {
      actions.append(h('span', { class: 'ok small wc-undone' }, 'Undone: everything is as it was before this call.'));
    } else {
      const btn = h('button', { type: 'button', class: 'btn small primary wc-undo-event', dataset: { event: String(ev.event_id) } },
        command ? 'Undo this command' : 'Undo this change');
      confirmButton(btn, `Click again to undo ${plural(ev.files.length, 'change')}`, async () => {
        try {
          const res = await this.rpc.call('undo.apply', { event_id: ev.event_id });
          const n = res.files.filter((f) => f.action !== 'none').length;
          this.done(`Undone: ${plural(n, 'file')} put back (event ${res.undo_event}, which can itself be undone).`);
        } catch (err) {
          status.textContent = err.kind === 'conflict'
            ? `Nothing was undone: ${err.message} The files are marked below.`
            : visible(err.message);
        }
      });
      actions.append(btn);
    }
    for (const d of ev.folders || []) {
      const btn = h('button', { type: 'button', class: 'btn small primary wc-restore-folder', dataset: { folder: d.path }, 'aria-label': `Restore the folder ${d.path}` }, 'Restore this folder');
      confirmButton(btn, `Click again to put back ${plural(d.files, 'file')}`, async () => {
        try {
          const res = await this.rpc.call('undo.apply', { event_id: ev.event_id, folder: d.path });
          const n = res.files.filter((f) => f.action !== 'none').length;
          this.done(`${d.path}/ is back: ${plural(n, 'file')} restored.`);
        } catch (err) {
          status.textContent = visible(err.message);
        }
      });
      actions.append(h('div', { class: 'wc-folder' },
        h('span', null, 'Deleted folder ', h('code', null, `${visible(d.path)}/`), ` (${plural(d.files, 'file')})`), btn));
    }
    const items = h('ul', { class: 'changes' }, ev.files.map((f) => this.file(f)));
    const body = ev.files.length > FOLD
      ? h('details', { class: 'wc-files' }, h('summary', null, `Show the ${plural(ev.files.length, 'file')}`), items)
      : items;
    return h('li', { class: undone(ev) ? 'wc-event undone' : 'wc-event', dataset: { event: String(ev.event_id) } }, head, actions, body);
  }

  file(f) {
    const what = h('div', null, h('code', null, visible(f.path)), ` — ${kinds[f.kind] || f.kind}`,
      f.from ? [' from ', h('code', null, visible(f.from))] : null, f.conflict ? '.' : `; ${actions[f.action] || f.action}.`);
    let body = null;
    if (f.conflict) body = h('p', { class: 'conflict' }, f.conflict);
    else if (f.diff) body = h('pre', { class: 'diff' }, f.diff.split('\n').map((l) => h('span', { class: l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : '' }, l + '\n')));
    else if (f.action !== 'none') body = h('p', { class: 'muted small' }, `${f.binary ? 'Binary file: ' : ''}${size(f.size_now)} now, ${size(f.size_after)} after the undo.`);
    return h('li', { class: f.conflict ? 'change conflict' : 'change', dataset: { path: f.path } }, what, body);
  }
}
