// The owner's remembered answers: rule.list and rule.revoke. The list
// refreshes when the audit log reports a rule made or revoked anywhere.
// "#rules?rule=ID" (an event's "Show the rule") points at one rule:
// highlighted and scrolled into view, or a sentence saying it is gone.
import { h, $, full, ago, toast, confirmButton, folderName, accessLabels, who, decisionName } from './dom.js';

export class Rules {
  constructor(app) {
    this.app = app;
    this.rpc = app.rpc;
    this.list = $('#rule-list');
    this.empty = $('#rules-empty');
    this.stale = true;
    this.visible = false;
  }

  show(params) {
    this.visible = true;
    this.wanted = params?.get('rule') || '';
    if (this.stale) this.load();
    else this.point();
  }

  hide() { this.visible = false; }

  changed() {
    this.stale = true;
    if (this.visible) this.load();
  }

  async load() {
    this.stale = false;
    try {
      const { rules } = await this.rpc.call('rule.list');
      rules.sort((a, b) => new Date(b.created) - new Date(a.created));
      this.list.replaceChildren(...rules.map((r) => this.render(r)));
      this.empty.hidden = rules.length > 0;
      this.point();
    } catch (e) {
      this.stale = true;
      if (e.kind === 'forbidden') {
        this.list.replaceChildren(h('p', { class: 'muted' }, e.message));
        this.empty.hidden = true;
      } else if (e.kind !== 'io') {
        toast(e.message, { kind: 'error' });
      }
    }
  }

  /** point highlights the rule the URL names, or says that it is gone. */
  point() {
    const gone = $('#rules-gone');
    for (const el of this.list.querySelectorAll('.rule.pointed')) el.classList.remove('pointed');
    gone.hidden = true;
    if (!this.wanted) return;
    const el = [...this.list.children].find((x) => x.dataset.id === this.wanted);
    if (!el) {
      gone.textContent = `That rule (${this.wanted}) has since been removed: it was revoked, it expired, or it lasted only until Corral restarted.`;
      gone.hidden = false;
      gone.scrollIntoView({ block: 'center' });
      return;
    }
    el.classList.add('pointed');
    el.tabIndex = -1;
    el.scrollIntoView({ block: 'center' });
    el.focus({ preventScroll: true });
  }

  render(r) {
    const revoke = h('button', { type: 'button', class: 'btn danger', 'aria-label': `Revoke: ${r.description}` }, 'Revoke');
    confirmButton(revoke, 'Click again to revoke', async () => {
      try {
        await this.rpc.call('rule.revoke', { id: r.id });
        el.remove();
        this.empty.hidden = this.list.children.length > 0;
        toast('Rule revoked. The agent will be asked again.');
      } catch (e) {
        toast(e.message, { kind: 'error' });
        this.load();
      }
    });
    let life;
    if (r.lifetime === 'session') life = 'until Corral restarts';
    else if (r.expires) life = `expires ${ago(r.expires)}`;
    else life = 'never expires';
    const el = h('article', { class: 'rule card', dataset: { id: r.id } },
      h('div', { class: 'main' },
        h('p', { class: 'desc' }, r.description || `${r.decision} ${r.access} ${r.target}`),
        r.description && r.description.includes(r.target) ? null
          : h('p', { class: 'target' }, r.match === 'prefix' ? `${r.target}/… (the whole folder)` : r.target),
        h('div', { class: 'meta' },
          h('span', { class: `chip ${r.decision}` }, decisionName(r.decision)),
          h('span', { class: 'chip' }, accessLabels[r.access] || r.access)),
        h('p', { class: 'meta' },
          h('span', { class: 'm' }, r.client === '*' ? 'any agent' : r.client),
          h('span', { class: 'm' }, `In ${folderName(r.user)}`),
          h('span', { class: 'm', title: full(r.created) }, `made ${ago(r.created)} by ${r.created_by ? who(r.created_by) : 'someone'}`),
          h('span', { class: 'm', title: r.expires ? full(r.expires) : null }, life))),
      revoke);
    return el;
  }
}
