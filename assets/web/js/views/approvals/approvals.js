// Pending approvals: a live list fed by approval.subscribe, answered with
// approval.respond. An answer from anywhere else (tray, phone, another
// tab) arrives as approval.resolved and removes the card at once.
import { h, $ } from '../../lib/dom/h.js';
import { clock, full } from '../../lib/dom/format.js';
import { toast } from '../../lib/dom/ui.js';
import { accessLabels, wantsSentence, folderName, who } from '../../lib/dom/names.js';
import { words } from '../../lib/words.js';
import { View } from '../../lib/view.js';
import { levelTag } from '../../lib/levels.js';

// The answers, their words and which one comes first are the server's
// (policy's one table): each approval carries its `choices` and
// `default_decision`.

/** said is "allowed once", "always denied" … for a's decision d. */
const said = (a, d) => (a.choices || []).find((x) => x.decision === d)?.said || d;

const fileAccess = new Set(['read', 'write', 'delete']);

export class Approvals extends View {
  constructor(app) {
    super(app, { keep: true });
    this.cards = new Map(); // id → {a, el, countdown}
    this.list = $('#approval-list');
    this.empty = $('#approvals-empty');
    this.rpc.on('approval.requested', ({ approval }) => this.add(approval));
    this.rpc.on('approval.resolved', ({ id, decision, by }) => this.resolved(id, decision, by));
    setInterval(() => this.tick(), 1000);
  }

  /** reconnected syncs at once, shown or not: the badge counts what waits. */
  reconnected() { this.sync(); }

  /** enter loads nothing: the list follows its events while hidden. */
  enter() {}

  /** sync subscribes, then reconciles with the server's list. */
  async sync() {
    try {
      await this.rpc.call('approval.subscribe');
      const { pending } = await this.rpc.call('approval.list');
      this.synced = true;
      document.body.dataset.approvalsReady = '1';
      const live = new Set(pending.map((a) => a.id));
      for (const id of [...this.cards.keys()]) if (!live.has(id)) this.remove(id);
      for (const a of pending) this.add(a);
      this.recount();
    } catch (e) {
      if (e.kind !== 'io') toast(e.message, { kind: 'error' });
    }
  }

  add(a) {
    if (this.cards.has(a.id)) return;
    const card = this.render(a);
    this.cards.set(a.id, card);
    // Oldest first: the one that will time out soonest is on top.
    const after = [...this.cards.values()].filter((c) => c !== card && new Date(c.a.expires_at) > new Date(a.expires_at));
    if (after.length) this.list.insertBefore(card.el, after.sort((x, y) => new Date(x.a.expires_at) - new Date(y.a.expires_at))[0].el);
    else this.list.append(card.el);
    this.tick();
    this.recount();
  }

  resolved(id, decision, by) {
    const c = this.cards.get(id);
    if (!c) return;
    this.remove(id);
    if (!c.mine) {
      const who = by === 'timeout' ? 'Nobody answered in time'
        : by === 'paused' ? 'Agents were paused'
          : `Answered elsewhere${by ? ` by ${who(by)}` : ''}`;
      toast(`${who}: ${c.a.client} was ${said(c.a, decision)}.`);
    }
  }

  remove(id) {
    const c = this.cards.get(id);
    if (!c) return;
    c.el.remove();
    this.cards.delete(id);
    this.recount();
  }

  /** recount shows how many requests wait: the empty note, the badge, the banner. */
  recount() {
    this.empty.hidden = this.cards.size > 0;
    this.app.setPending(this.cards.size);
  }

  tick() {
    const now = Date.now();
    for (const c of this.cards.values()) {
      const total = Math.max(1, new Date(c.a.expires_at) - new Date(c.a.requested_at));
      const left = new Date(c.a.expires_at) - now;
      c.fill.style.width = `${Math.max(0, Math.min(100, (left / total) * 100))}%`;
      c.left.textContent = left > 0 ? words.countdown.replace('%s', clock(left / 1000)) : words.time_up;
      c.countdown.classList.toggle('low', left < words.countdown_low_ms);
      if (left <= 0) for (const b of c.buttons) b.disabled = true;
    }
  }

  render(a) {
    const id = `ap-${a.id}`;
    const oneTime = !!a.one_time_only;
    // The server offers a folder only where an answer may cover it (never
    // "/", the home folder or Corral's own files).
    const widenable = !oneTime && fileAccess.has(a.access) && !!a.folder;
    const fill = h('div', { class: 'fill' });
    const left = h('span', { class: 'left' });
    // As the native dialog says it and colours it (core/words).
    const countdown = h('div', { class: 'countdown', 'aria-label': words.countdown_label },
      left, h('div', { class: 'bar', role: 'presentation' }, fill));

    const widen = widenable ? h('input', { type: 'checkbox', id: `${id}-widen` }) : null;
    const expiry = oneTime ? null : h('select', { id: `${id}-exp` },
      words.lifetimes.map((l, i) => h('option', { value: l.value, selected: i === words.default_lifetime }, l.label)));
    const options = oneTime
      ? h('p', { class: 'once-note' }, a.access === 'network'
        ? words.network_once
        : words.once_only)
      : h('div', { class: 'options' },
        widen && h('label', { for: widen.id }, widen,
          h('span', null, `${words.folder_wide} `, h('code', null, a.folder))),
        h('label', { for: expiry.id }, h('span', null, words.always_lasts), expiry));

    // One row of allow buttons and one of deny buttons, of equal weight;
    // only the default answer (Deny for a target that holds secrets) is
    // the strong button.
    // The owner's sentence with a denial ("use the share folder
    // instead"): the agent reads it in its error, the log keeps it. Sent
    // only with a deny; Enter in it denies once.
    const reason = h('input', {
      type: 'text', id: `${id}-reason`, class: 'deny-reason', maxlength: 500, autocomplete: 'off', enterkeyhint: 'send',
      placeholder: 'use the share folder instead',
      onkeydown: (e) => { if (e.key === 'Enter') { e.preventDefault(); this.answer(a, 'deny_once', widen, expiry, reason); } },
    });
    const reasonField = h('label', { class: 'deny-reason-field', for: reason.id },
      h('span', null, 'If you deny, tell the agent why (optional)'), reason);
    const button = (x) => h('button', {
      type: 'button',
      class: `btn ${x.allows ? 'allow' : 'deny'}${x.decision === a.default_decision ? '' : '-soft'}`,
      title: x.explain,
      dataset: { decision: x.decision, default: x.decision === a.default_decision ? '1' : '' },
      onclick: () => this.answer(a, x.decision, widen, expiry, reason),
    }, x.label);
    const choices = a.choices || [];
    const buttons = choices.map(button);
    const row = (allows) => h('div', { class: `row ${allows ? 'allows' : 'denies'}` }, buttons.filter((b, i) => choices[i].allows === allows));

    // The plain-language line, with the target set off as code when it
    // names it (it usually does), so a long path wraps and reads well.
    const line = a.description || wantsSentence(a.client, a.access, a.target);
    const at = a.target ? line.indexOf(a.target) : -1;
    const headline = at < 0 ? [line] : [line.slice(0, at), h('code', null, a.target), line.slice(at + a.target.length)];
    const el = h('article', { class: `approval card ${a.access}${a.sensitive ? ' sensitive' : ''}`, id, 'aria-labelledby': `${id}-h`, dataset: { id: a.id } },
      h('h2', { class: 'headline', id: `${id}-h` }, headline),
      a.sensitive ? h('p', { class: 'careful', role: 'alert' }, words.careful.replace('%s', a.sensitive)) : null,
      a.asked ? h('p', { class: 'asked muted' }, 'The agent asked for ', h('code', null, a.asked), ', which leads there.') : null,
      a.domains?.length ? h('p', { class: 'domains-note muted' }, a.domains.length > 1
        ? `Asked before the command starts, once for these ${a.domains.length} domains: your answer covers them all for this run (“Always” makes one rule per domain). Domains it did not list are refused without asking.`
        : 'Asked before the command starts: your answer covers this domain for this run. Domains it did not list are refused without asking.') : null,
      h('div', { class: 'who' },
        h('span', { class: 'chip', title: 'Agent' }, a.client), levelTag(a.client, a),
        h('span', { class: 'chip', title: 'Folder' }, `In ${folderName(a.user)}`),
        h('span', { class: 'chip access', title: 'Access' }, accessLabels[a.access] || a.access)),
      at < 0 && a.target ? h('div', { class: 'target' }, a.target) : null,
      a.reason ? h('blockquote', { class: 'why' }, h('span', { class: 'why-label' }, 'Why, in the agent’s words'), a.reason) : null,
      a.preview ? h('pre', { class: 'preview' }, a.preview) : null,
      countdown,
      options,
      h('div', { class: 'decisions', role: 'group', 'aria-label': 'Answer' }, row(true), reasonField, row(false)),
      h('p', { class: 'muted small' }, `Asked ${full(a.requested_at)}`));
    return { a, el, fill, left, countdown, buttons: [...buttons, reason], mine: false };
  }

  async answer(a, decision, widen, expiry, reason) {
    const c = this.cards.get(a.id);
    if (!c || c.el.classList.contains('answering')) return;
    const params = { id: a.id, decision };
    const why = reason?.value.trim() || '';
    const denies = !a.choices.find((x) => x.decision === decision)?.allows;
    if (denies && why) params.reason = why;
    const remembered = !!a.choices.find((x) => x.decision === decision)?.remembers;
    if (remembered && widen?.checked) params.widen = 'folder';
    if ((decision === 'allow_always' || decision === 'deny_always') && expiry?.value) params.expires_in = expiry.value;
    c.el.classList.add('answering');
    for (const b of c.buttons) b.disabled = true;
    c.mine = true;
    try {
      await this.rpc.call('approval.respond', params);
      this.remove(a.id);
      toast(`${a.client} was ${said(a, decision)}${params.reason ? ', with your reason' : ''}.`);
      if (remembered) this.app.rulesChanged();
    } catch (e) {
      c.mine = false;
      if (e.kind === 'not_found' || e.kind === 'conflict') {
        this.remove(a.id);
        toast(e.message);
        return;
      }
      toast(e.message, { kind: 'error' });
      c.el.classList.remove('answering');
      for (const b of c.buttons) b.disabled = false;
    }
  }
}
