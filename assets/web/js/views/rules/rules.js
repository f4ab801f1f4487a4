// The owner's rules: remembered answers and rules written by hand
// (rule.list, rule.revoke, rule.preview, rule.add, rule.update,
// rule.export, rule.import). The form shows, before saving, what the rule
// covers in the server's own sentence (rule.preview: policy's Covers of
// the very rule it would save). The list refreshes when the audit log
// reports a rule made, changed or revoked anywhere.
// "#rules?rule=ID" (an event's "Show the rule") points at one rule:
// highlighted and scrolled into view, or a sentence saying it is gone.
import { h, $, $$ } from '../../lib/dom/h.js';
import { full, ago } from '../../lib/dom/format.js';
import { toast, confirmButton, follow } from '../../lib/dom/ui.js';
import { folderName, accessLabels, who, decisionName } from '../../lib/dom/names.js';
import { View } from '../../lib/view.js';

const PREVIEW_DELAY_MS = 250;

export class Rules extends View {
  constructor(app) {
    super(app, { keep: true }); // app.rulesChanged() says when the rules change
    this.list = $('#rule-list');
    this.empty = $('#rules-empty');
    this.editing = null; // the rule the form changes (null: a new one)
    this.previewTimer = 0;
    this.previewSeq = 0;
    const form = $('#rule-form');
    $('#rule-new').addEventListener('click', () => this.openForm());
    $('#rule-cancel').addEventListener('click', () => this.closeForm());
    form.addEventListener('submit', (e) => { e.preventDefault(); this.save(); });
    form.addEventListener('input', () => this.schedulePreview());
    form.addEventListener('change', () => { this.showKind(); this.schedulePreview(); });
    $('#rule-export').addEventListener('click', () => this.exportFile());
    $('#rule-import-file').addEventListener('change', (e) => this.importFile(e.target));
  }

  kind() { return $('input[name="rule-kind"]:checked').value; }

  /** showKind shows the fields of the chosen kind; a command rule is for one agent. */
  showKind() {
    const kind = this.kind();
    for (const el of $$('#rule-form [data-kind]')) el.hidden = el.dataset.kind !== kind;
    const any = $('#rule-client option[value="*"]');
    if (any) {
      any.disabled = kind === 'command';
      if (kind === 'command' && $('#rule-client').value === '*') $('#rule-client').selectedIndex = 1;
    }
  }

  async openForm(r) {
    const form = $('#rule-form');
    form.reset();
    this.editing = r || null;
    $('#h-rule-form').textContent = r ? 'Change a rule' : 'Add a rule';
    $('#rule-save').textContent = r ? 'Save changes' : 'Save rule';
    let agents = [];
    try { agents = (await this.rpc.call('agent.list')).agents || []; } catch { /* the list stays short */ }
    $('#rule-client').replaceChildren(h('option', { value: '*' }, 'All agents'),
      ...agents.map((a) => h('option', { value: a.name }, `${a.name} (${a.level_label || 'agent'})`)));
    const keep = $('#rule-expires option[data-keep]');
    keep?.remove();
    if (r) {
      const kind = r.access === 'network' ? 'network' : r.access === 'execute' ? 'command' : 'files';
      $(`input[name="rule-kind"][value="${kind}"]`).checked = true;
      $('#rule-client').value = r.client;
      if (kind === 'files') {
        $('#rule-path').value = r.target;
        $('#rule-access').value = r.access;
        $('#rule-whole').checked = r.match === 'prefix';
      } else if (kind === 'network') $('#rule-domain').value = r.target;
      else $('#rule-command').value = r.target;
      $(`input[name="rule-decision"][value="${r.decision}"]`).checked = true;
      $('#rule-note').value = r.note || '';
      if (r.expires) {
        $('#rule-expires').prepend(h('option', { value: 'keep', dataset: { keep: '1' } }, `until ${full(r.expires)} (as now)`));
        $('#rule-expires').value = 'keep';
      }
    }
    this.showKind();
    form.hidden = false;
    form.scrollIntoView({ block: 'nearest' });
    $('input[name="rule-kind"]:checked').focus();
    this.preview();
  }

  closeForm() {
    $('#rule-form').hidden = true;
    this.editing = null;
    $('#rule-covers').replaceChildren();
  }

  /** params are the form's rule as rule.preview and rule.add take it. */
  params() {
    const kind = this.kind();
    const p = { client: $('#rule-client').value || '*', decision: $('input[name="rule-decision"]:checked').value };
    if (kind === 'files') {
      Object.assign(p, { access: $('#rule-access').value, target: $('#rule-path').value.trim(), whole_folder: $('#rule-whole').checked });
    } else if (kind === 'network') {
      Object.assign(p, { access: 'network', target: $('#rule-domain').value.trim() });
    } else {
      Object.assign(p, { access: 'execute', target: $('#rule-command').value.trim() });
    }
    if (this.editing) p.user = this.editing.user;
    const exp = $('#rule-expires').value;
    if (exp === 'keep') p.expires = this.editing.expires;
    else if (exp) p.expires_in = exp;
    const note = $('#rule-note').value.trim();
    if (note) p.note = note;
    return p;
  }

  schedulePreview() {
    clearTimeout(this.previewTimer);
    this.previewTimer = setTimeout(() => this.preview(), PREVIEW_DELAY_MS);
  }

  /** preview shows what the rule would cover, in the server's sentence, or why it cannot be saved. */
  async preview() {
    const out = $('#rule-covers');
    const p = this.params();
    const seq = ++this.previewSeq;
    if (!p.target) {
      out.className = 'rule-covers muted';
      out.textContent = 'Fill in what the rule is about; what it covers shows here before you save it.';
      delete out.dataset.ok;
      return;
    }
    try {
      const r = await this.rpc.call('rule.preview', p);
      if (seq !== this.previewSeq) return;
      out.className = 'rule-covers ok';
      out.replaceChildren(h('strong', null, 'This rule: '), r.covers);
      out.dataset.ok = '1';
    } catch (e) {
      if (seq !== this.previewSeq) return;
      out.className = 'rule-covers error';
      out.replaceChildren(h('strong', null, 'Cannot be saved: '), e.message);
      delete out.dataset.ok;
    }
  }

  async save() {
    clearTimeout(this.previewTimer);
    try {
      const p = this.params();
      const r = this.editing ? await this.rpc.call('rule.update', { id: this.editing.id, ...p }) : await this.rpc.call('rule.add', p);
      toast(this.editing ? 'Rule changed.' : 'Rule saved. It decides from the next request on.');
      this.closeForm();
      this.wanted = r.rule.id;
      await this.reload();
    } catch (e) {
      toast(e.message, { kind: 'error', timeout: 10000 });
      this.preview();
    }
  }

  async exportFile() {
    try {
      const r = await this.rpc.call('rule.export');
      const url = URL.createObjectURL(new Blob([r.file], { type: 'application/json' }));
      follow({ href: url, download: r.name });
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      toast(`Exported ${r.count} rule${r.count === 1 ? '' : 's'}.`);
    } catch (e) { toast(e.message, { kind: 'error' }); }
  }

  async importFile(input) {
    const f = input.files?.[0];
    input.value = '';
    if (!f) return;
    try {
      const r = await this.rpc.call('rule.import', { file: await f.text() });
      toast(`Imported ${r.added} rule${r.added === 1 ? '' : 's'}${r.skipped ? `; ${r.skipped} already in force` : ''}.`);
      this.reload();
    } catch (e) { toast(e.message, { kind: 'error', timeout: 15000 }); }
  }

  enter(params) {
    this.wanted = params?.get('rule') || '';
    if (this.stale) this.reload();
    else this.point();
  }

  async load() {
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
        this.reload();
      }
    });
    let life;
    if (r.lifetime === 'session') life = 'until Corral restarts';
    else if (r.expires) life = `expires ${ago(r.expires)}`;
    else life = 'never expires';
    const el = h('article', { class: 'rule card', dataset: { id: r.id } },
      h('div', { class: 'main' },
        h('p', { class: 'desc' }, r.description || `${r.decision} ${r.access} ${r.target}`),
        r.note ? h('p', { class: 'note muted' }, `Note: ${r.note}`) : null,
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
      h('div', { class: 'row-actions' },
        revoke,
        r.lifetime === 'always' ? h('button', { type: 'button', class: 'btn', 'data-act': 'edit', 'aria-label': `Edit: ${r.description}`, onclick: () => this.openForm(r) }, 'Edit') : null));
    return el;
  }
}
