// Settings: the values of config.toml a home user changes (settings.get),
// each saved on its own when it changes (settings.set). Corral writes the
// one line of config.toml and applies the change at once where it can;
// what waits for a restart is listed with a Restart Corral button
// (corral.restart), after which this tab reconnects by itself (rpc.js).
// A paired phone sees the values and cannot change them.
import { h, $, visible } from '../../lib/dom/h.js';
import { toast } from '../../lib/dom/ui.js';
import { View } from '../../lib/view.js';

export class Settings extends View {
  constructor(app) {
    super(app);
    this.body = $('#settings-body');
    this.restarting = false;
    this.gen = 0;
    // key → {value, message}: a refused value and why, shown until that
    // setting is saved, also across a render of the list (the answer to
    // an earlier change, a reload) that would otherwise drop it.
    this.refused = new Map();
    this.seq = 0;
    this.latest = new Map(); // key → the seq of its last change: an older answer does not clear a newer refusal
    $('#settings-restart-btn').addEventListener('click', () => this.restart());
  }

  reconnected() {
    if (this.restarting) {
      this.restarting = false;
      toast('Corral has restarted; every setting is in effect.');
    }
    super.reconnected();
  }

  enter() { this.reload(); }

  async load() {
    const gen = ++this.gen;
    try {
      const r = await this.rpc.call('settings.get');
      if (gen !== this.gen) return;
      this.render(r);
      document.body.dataset.settingsReady = String(gen);
    } catch (e) {
      if (gen !== this.gen || e.kind === 'io') return;
      toast(e.message, { kind: 'error' });
    }
  }

  render(r) {
    const ro = !!this.app.device;
    $('#settings-path').textContent = visible(r.path || '');
    $('#settings-readonly').hidden = !ro;
    const problem = $('#settings-problem');
    problem.hidden = !r.problem;
    problem.textContent = visible(r.problem || '');
    const lan = $('#settings-lan');
    lan.hidden = !r.lan_url;
    $('#settings-lan-url').textContent = visible(r.lan_url || '');
    this.showRestart(r, ro);
    const groups = new Map();
    for (const st of r.settings || []) {
      if (!groups.has(st.group)) groups.set(st.group, []);
      groups.get(st.group).push(st);
    }
    const focused = document.activeElement?.dataset?.key;
    this.body.replaceChildren(...[...groups].map(([name, list]) => h('section', { class: 'card settings-group' },
      h('h2', { class: 'card-title' }, name),
      ...list.map((st) => this.row(st, ro)))));
    if (focused) this.body.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
  }

  showRestart(r, ro) {
    const box = $('#settings-restart');
    const keys = r.restart_needed || [];
    box.hidden = keys.length === 0;
    const names = (r.settings || []).filter((st) => keys.includes(st.key)).map((st) => st.label);
    $('#settings-restart-text').textContent = visible(`Saved, and waiting for a restart: ${names.join(', ')}.`);
    const btn = $('#settings-restart-btn');
    btn.hidden = ro || !r.can_restart;
    btn.disabled = this.restarting;
    $('#settings-restart-manual').hidden = ro || !!r.can_restart;
  }

  row(st, ro) {
    const id = `set-${st.key.replace(/[^a-z0-9]/gi, '-')}`;
    let input;
    if (st.kind === 'bool') {
      input = h('input', { type: 'checkbox', id, dataset: { key: st.key }, role: 'switch' });
      input.checked = !!st.value;
    } else if (st.kind === 'list') {
      input = h('textarea', { id, rows: 2, spellcheck: 'false', dataset: { key: st.key } });
      input.value = (st.value || []).join('\n');
    } else {
      input = h('input', { type: 'text', id, spellcheck: 'false', autocomplete: 'off', dataset: { key: st.key },
        inputmode: st.kind === 'int' ? 'numeric' : null });
      input.value = String(st.value ?? '');
    }
    input.disabled = ro;
    const error = h('p', { class: 'settings-error', role: 'alert', hidden: true });
    const refused = ro ? null : this.refused.get(st.key);
    if (refused) {
      if (st.kind === 'bool') input.checked = !!refused.value;
      else if (st.kind === 'list') input.value = refused.value.join('\n');
      else input.value = refused.value;
      error.textContent = visible(refused.message);
      error.hidden = false;
      input.setAttribute('aria-invalid', 'true');
    }
    const tags = h('span', { class: 'settings-tags' });
    if (st.restart_needed) {
      tags.append(h('span', { class: 'tag warn', title: `Saved as ${JSON.stringify(st.saved)}` }, 'after a restart'));
    } else if (!st.live) {
      tags.append(h('span', { class: 'tag muted', title: 'Corral applies this when it starts.' }, 'needs a restart'));
    }
    const el = h('div', { class: `settings-row kind-${st.kind}`, dataset: { key: st.key } },
      h('div', { class: 'settings-label' },
        h('label', { for: id }, st.label), tags,
        st.help ? h('p', { class: 'muted small' }, st.help) : null,
        h('p', { class: 'muted small settings-key' }, h('code', null, st.key))),
      h('div', { class: 'settings-control' }, input, error));
    if (!ro) input.addEventListener('change', () => this.save(st, input, error));
    return el;
  }

  value(st, input) {
    if (st.kind === 'bool') return input.checked;
    if (st.kind === 'list') return input.value.split('\n').map((x) => x.trim()).filter(Boolean);
    return input.value.trim();
  }

  async save(st, input, error) {
    error.hidden = true;
    input.setAttribute('aria-busy', 'true');
    const value = this.value(st, input);
    const seq = ++this.seq;
    this.latest.set(st.key, seq);
    const last = () => this.latest.get(st.key) === seq;
    try {
      const r = await this.rpc.call('settings.set', { values: { [st.key]: value } });
      if (last()) this.refused.delete(st.key);
      const now = (r.applied || []).includes(st.key);
      toast(now || st.live ? `${st.label}: saved, in effect now.` : `${st.label}: saved; it takes effect after a restart.`);
      this.render(r);
    } catch (e) {
      if (!last()) return;
      this.refused.set(st.key, { value, message: e.message });
      // The row on the page now: a render since the change may have
      // replaced the one that was changed.
      const row = [...this.body.querySelectorAll('.settings-row')].find((el) => el.dataset.key === st.key);
      const shown = row?.querySelector('.settings-error') || error;
      shown.textContent = visible(e.message);
      shown.hidden = false;
      (row?.querySelector('[data-key]') || input).setAttribute('aria-invalid', 'true');
    } finally {
      input.removeAttribute('aria-busy');
    }
  }

  async restart() {
    const btn = $('#settings-restart-btn');
    btn.disabled = true;
    try {
      await this.rpc.call('corral.restart');
      this.restarting = true;
      $('#settings-restart-text').textContent = 'Corral is restarting; this page reconnects by itself.';
    } catch (e) {
      btn.disabled = false;
      toast(e.message, { kind: 'error' });
    }
  }
}
