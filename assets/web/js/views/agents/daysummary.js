// "What did my agent do today / in the last hour?": one agent's day in a
// few plain lines — files changed, commands run, domains reached,
// questions asked and how they were answered — counted by the server in
// one query (audit.summary). Each line opens the Activity log filtered to
// those events (#activity?client=…&op=…&range=…). Shown in each agent's
// row on the Agents page and, for every agent, on the Activity page.
import { h, $, visible } from '../../lib/dom/h.js';
import { isoSeconds, plural, num } from '../../lib/dom/format.js';
import { answered } from '../../lib/dom/names.js';
import { View } from '../../lib/view.js';

export const PERIODS = { today: 'Today', '1h': 'Last hour' };

/** since is the start of a period: local midnight for today, an hour ago for 1h. */
export function since(period, now = Date.now()) {
  if (period === '1h') return now - 3600e3;
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** logLink is the Activity log filtered to one agent's events of a kind in the period. */
export function logLink(agent, op, period, from) {
  const p = new URLSearchParams({ client: agent, op });
  if (period === '1h') p.set('range', '1h');
  else {
    p.set('range', 'custom');
    p.set('since', isoSeconds(from));
  }
  return `#activity?${p}`;
}

/** answerWords says an answer in the dashboard's words ("allowed once"), or "not answered in time". */
function answerWords(a) {
  if (a === 'timeout') return 'not answered in time';
  const s = answered({ answer: a }).replace(/ by you$/, '');
  return s.charAt(0).toLowerCase() + s.slice(1);
}

/** lines turns an audit.summary result into the summary's lines: [kind, text, op, count]. */
export function lines(s) {
  const out = [];
  out.push(['files', s.files ? `Changed ${plural(s.files, 'file')} in ${plural(s.file_calls, 'call')}` : 'Changed no files', 'changes', s.files]);
  out.push(['commands', s.commands
    ? `Ran ${plural(s.commands, 'command')}${s.commands_failed ? ` (${num(s.commands_failed)} failed or refused)` : ''}`
    : 'Ran no commands', 'command.run', s.commands]);
  if (s.domains.length) {
    const shown = s.domains.slice(0, 3).map((d) => `${visible(d.domain)}${d.denied ? ` (${num(d.denied)} refused)` : ''}`);
    const more = s.domains.length > 3 ? ` and ${num(s.domains.length - 3)} more` : '';
    out.push(['domains', `Reached ${plural(s.domains.length, 'domain')}: ${shown.join(', ')}${more}`, 'network.connect', s.domains.length]);
  } else {
    out.push(['domains', 'Used no network', 'network.connect', 0]);
  }
  out.push(['questions', s.questions
    ? `Asked you ${plural(s.questions, 'question')}: ${s.answers.map((a) => `${num(a.count)} ${answerWords(a.answer)}`).join(', ')}`
    : 'Asked you nothing', 'asked', s.questions]);
  return out;
}

/**
 * DaySummary is one agent's summary with its period (today or the last
 * hour), read when it is made and when the period changes.
 */
export class DaySummary {
  constructor(rpc, agent, period = 'today') {
    this.rpc = rpc;
    this.agent = agent;
    this.period = period;
    this.list = h('ul', { class: 'day-lines' });
    this.buttons = Object.entries(PERIODS).map(([p, label]) => h('button', {
      type: 'button', class: 'btn small', dataset: { period: p }, 'aria-pressed': String(p === period),
      onclick: () => { this.period = p; this.load(); },
    }, label));
    this.el = h('div', { class: 'day-summary', dataset: { agent } },
      h('div', { class: 'day-head' }, h('span', { class: 'muted small' }, `What ${agent} did`), h('span', { class: 'day-periods', role: 'group', 'aria-label': `Period for ${agent}` }, this.buttons)),
      this.list);
    this.load();
  }

  async load() {
    const from = since(this.period);
    for (const b of this.buttons) b.setAttribute('aria-pressed', String(b.dataset.period === this.period));
    delete this.el.dataset.ready;
    let s;
    try {
      s = await this.rpc.call('audit.summary', { client: this.agent, since: isoSeconds(from) });
    } catch (e) {
      this.list.replaceChildren(h('li', { class: 'muted small' }, visible(e.message)));
      return;
    }
    const period = this.period;
    const all = lines(s);
    this.list.replaceChildren(...(all.some((l) => l[3])
      ? all.map(([kind, text, op, n]) => h('li', { dataset: { kind }, class: n ? '' : 'none' },
        n ? h('a', { href: logLink(this.agent, op, period, from) }, text) : text))
      : [h('li', { class: 'none' }, `Nothing ${period === '1h' ? 'in the last hour' : 'today'}: no files changed, no commands, no network, no questions.`)]));
    this.el.dataset.ready = period;
  }
}

/** daySummary is one agent's summary element (the Agents page's rows). */
export const daySummary = (rpc, agent) => new DaySummary(rpc, agent).el;

/**
 * AllDays fills the Activity page's "What your agents did" with one
 * summary per agent (client.list), read when it is opened: a View that is
 * visible while its <details> is open.
 */
export class AllDays extends View {
  constructor(app) {
    super(app);
    this.box = $('#day-summaries');
    this.box.addEventListener('toggle', () => { if (this.box.open) this.show(); else this.hide(); });
    app.infoReady.then(() => { this.box.hidden = !!app.device; }); // a paired phone may not read summaries
  }

  async load() {
    const list = $('#day-summaries-list');
    if (this.app.device) { // a paired phone may not read summaries
      this.box.hidden = true;
      return;
    }
    try {
      const r = await this.rpc.call('client.list');
      const names = (r.clients || []).map((c) => c.name);
      list.replaceChildren(...(names.length ? names.map((n) => daySummary(this.rpc, n)) : [h('p', { class: 'muted small' }, 'No agents yet.')]));
    } catch (e) {
      list.replaceChildren(h('p', { class: 'muted small' }, visible(e.message)));
    }
  }
}
