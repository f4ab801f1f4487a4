// The owner's remembered answers: rule.list and rule.revoke. The list
// refreshes when the audit log reports a rule made or revoked anywhere.
import { h, $, full, ago, toast, confirmButton, folderName, accessLabels } from './dom.js';

export class Rules {
  constructor(app) {
    this.app = app;
    this.rpc = app.rpc;
    this.list = $('#rule-list');
    this.empty = $('#rules-empty');
    this.stale = true;
    this.visible = false;
  }

  show() {
    this.visible = true;
    if (this.stale) this.load();
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
          h('span', { class: `chip ${r.decision}` }, r.decision === 'allow' ? 'Allow' : 'Deny'),
          h('span', { class: 'chip' }, accessLabels[r.access] || r.access)),
        h('p', { class: 'meta' },
          h('span', { class: 'm' }, r.client === '*' ? 'any agent' : r.client),
          h('span', { class: 'm' }, `In ${folderName(r.user)}`),
          h('span', { class: 'm', title: full(r.created) }, `made ${ago(r.created)} by ${r.created_by || 'someone'}`),
          h('span', { class: 'm', title: r.expires ? full(r.expires) : null }, life))),
      revoke);
    return el;
  }
}
