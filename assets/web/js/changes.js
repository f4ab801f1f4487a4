// "What changed": every file one agent changed in a time range (last
// hour, today, yesterday, last 7 days), read from undo.client's dry run,
// so each file shows what undoing would do — a diff for text, sizes for
// binary files, and a conflict in plain words when the file changed again
// since. One button undoes all of it (after a second click); each file
// can be restored on its own. The header shows the version store's size
// (versions.usage). The agent and range live in the URL
// (#changes?client=NAME&range=today).
import { h, $, when, size, isoSeconds, opName, plural, toast, visible, confirmButton, ago, scopeName } from './dom.js';
import { scopeContext } from './links.js';

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

export class Changes {
  constructor(app) {
    this.app = app;
    this.rpc = app.rpc;
    this.clients = [];
    this.client = '';
    this.range = 'today';
    this.gen = 0;
    this.shown = false;
    this.list = $('#wc-list');
    this.summary = $('#wc-summary');
    $('#wc-form').addEventListener('submit', (e) => e.preventDefault());
    $('#wc-agent').addEventListener('change', () => { this.client = $('#wc-agent').value; this.go(); this.usage(); });
    $('#wc-range').addEventListener('change', () => { this.range = $('#wc-range').value; this.go(); });
  }

  /** setClients fills the agent list from client.list. */
  setClients(names) {
    this.clients = names;
    this.fillAgents();
    if (this.shown && !this.client && names.length) {
      this.client = names[0];
      this.go();
    }
  }

  fillAgents() {
    const sel = $('#wc-agent');
    const names = [...this.clients];
    if (this.client && !names.includes(this.client)) names.push(this.client);
    sel.replaceChildren(...names.map((n) => h('option', { value: n }, n)));
    if (!names.length) sel.append(h('option', { value: '' }, 'No agents yet'));
    sel.value = this.client;
  }

  show(params) {
    this.shown = true;
    this.client = params.get('client') || this.client || this.clients[0] || '';
    const r = params.get('range');
    this.range = RANGES.includes(r) ? r : this.range;
    this.fillAgents();
    $('#wc-range').value = this.range;
    this.writeURL();
    this.usage();
    this.load();
  }

  hide() { this.shown = false; }

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
      const mine = (u.agents || []).find((a) => a.client === this.client);
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
    if (!this.client) {
      this.summary.textContent = 'Choose an agent.';
      this.list.replaceChildren();
      return;
    }
    this.summary.textContent = 'Reading the files as they are now…';
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

  render(r, params) {
    const label = $('#wc-range').selectedOptions[0]?.textContent.toLowerCase() || '';
    const files = r.events.reduce((n, ev) => n + ev.files.length, 0);
    if (!files) {
      this.summary.textContent = `${this.client} changed no files ${label === 'today' || label === 'yesterday' ? label : `in the ${label}`}.`;
      this.list.replaceChildren();
      return;
    }
    const status = h('p', { class: 'small', role: 'status', id: 'wc-status' });
    this.summary.replaceChildren(h('span', null,
      h('span', null, `${this.client} changed ${plural(files, 'file')} in ${plural(r.events.length, 'call')}.`),
      r.conflicts ? h('span', { class: 'conflict' }, ` ${plural(r.conflicts, 'file')} changed again since, by someone else; Corral will not overwrite ${r.conflicts === 1 ? 'it' : 'them'}.`) : null));

    const undo = h('button', { type: 'button', class: 'btn primary', id: 'wc-undo' }, 'Undo all of these');
    confirmButton(undo, `Click again to undo ${plural(files, 'change')}`, async () => {
      try {
        const done = await this.rpc.call('undo.client', { ...params });
        const n = done.events.reduce((k, ev) => k + ev.files.filter((f) => f.action !== 'none' && !f.conflict).length, 0);
        status.textContent = `Undone: ${plural(n, 'file')} put back. Each undo is an event in the activity, and can itself be undone.`;
        toast('Undone.');
        this.usage();
      } catch (err) {
        status.textContent = err.kind === 'conflict'
          ? `Nothing was undone: ${err.message} The files are marked below; restore the others one by one.`
          : visible(err.message);
      }
    });

    const groups = r.events.map((ev) => h('li', { class: 'wc-event' },
      h('p', { class: 'muted small' },
        h('a', { href: `#event=${ev.event_id}` }, `${ev.time ? when(ev.time) : `Event ${ev.event_id}`}`),
        ` · ${opName(ev.op)}${ev.user ? ` · ${scopeName(ev.user)}` : ''}`),
      h('ul', { class: 'changes' }, ev.files.map((f) => this.file(ev, f, status)))));
    this.list.replaceChildren(
      h('div', { class: 'detail-actions' }, undo), status,
      h('ul', { class: 'wc-events' }, groups));
  }

  file(ev, f, status) {
    const what = h('div', null, h('code', null, visible(f.path)), ` — ${kinds[f.kind] || f.kind}`,
      f.from ? [' from ', h('code', null, visible(f.from))] : null, f.conflict ? '.' : `; ${actions[f.action] || f.action}.`);
    let body = null;
    if (f.conflict) body = h('p', { class: 'conflict' }, f.conflict);
    else if (f.diff) body = h('pre', { class: 'diff' }, f.diff.split('\n').map((l) => h('span', { class: l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : '' }, l + '\n')));
    else if (f.action !== 'none') body = h('p', { class: 'muted small' }, `${f.binary ? 'Binary file: ' : ''}${size(f.size_now)} now, ${size(f.size_after)} after the undo.`);
    let restore = null;
    if (f.version && (f.kind === 'modified' || f.kind === 'deleted')) {
      restore = h('button', { type: 'button', class: 'btn small', 'aria-label': `Restore ${f.path}` }, 'Restore');
      confirmButton(restore, 'Click again to restore', async () => {
        try {
          await this.rpc.call('version.restore', { path: f.path, version: f.version, context: scopeContext(ev.user) });
          status.textContent = `${f.path} has its content from before this change again.`;
        } catch (err) {
          status.textContent = visible(err.message);
        }
      });
    }
    return h('li', { class: f.conflict ? 'change conflict' : 'change', dataset: { path: f.path } }, what, body, restore);
  }
}
