// Agents and people (README "Agents and people"). agent.list and
// person.list fill the page; adding an agent shows its key once and opens
// the connect dialog, whose snippets and file writes come from the
// daemon (agent.connect, agent.connect_preview, agent.connect_write): the
// page names an app, never a path. Agents and people written in
// config.toml are shown read-only (pause and connect still work); the
// others can be changed in the same form that adds them (agent.update).
// Test connection listens to the live audit stream (audit.subscribe,
// audit.event) for the agent's next call.
import { h, $, $$ } from '../../lib/dom/h.js';
import { ago, full } from '../../lib/dom/format.js';
import { toast, confirmButton } from '../../lib/dom/ui.js';
import { scopeName } from '../../lib/dom/names.js';
import { daySummary } from './daysummary.js';
import { allLevels, levelInfo, setAgentLevels } from '../../lib/levels.js';
import { View } from '../../lib/view.js';

const TEST_GIVE_UP_MS = 5 * 60 * 1000;

/** copyText puts text on the clipboard, or selects el for the owner to copy. */
async function copyText(text, el) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      toast('Copied.');
      return;
    }
  } catch { /* select instead */ }
  const range = document.createRange();
  range.selectNodeContents(el);
  const sel = getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  toast('Selected: press Ctrl+C to copy.');
}

/**
 * connectOrder lists agents as the Agents page shows them: those used,
 * most recent first, then those added here, then unused ones written in
 * config.toml (their Connect is not the page's first, green button).
 */
function connectOrder(agents) {
  const rank = (a) => (a.last_used ? 0 : a.from_config ? 2 : 1);
  return [...agents].sort((x, y) => rank(x) - rank(y) || (y.last_used || '').localeCompare(x.last_used || ''));
}

export class Agents extends View {
  constructor(app) {
    super(app);
    this.agents = [];
    this.people = [];
    this.keys = new Map(); // agent name → the key shown once, while this page lives
    this.dlg = $('#connect');
    this.testTimer = 0;
    this.testing = ''; // the agent Test connection waits for
    this.editing = ''; // the agent the form changes ('' while adding one)
    $('#agent-add').addEventListener('click', () => this.openForm());
    $('#agent-form').addEventListener('submit', (e) => { e.preventDefault(); if (this.editing) this.save(); else this.add(); });
    $('#agent-actfor').addEventListener('change', () => { $('#agent-actfor-people').hidden = $('#agent-actfor').value !== 'some'; });
    this.rpc.on('audit.event', ({ event }) => this.onAuditEvent(event));
    $('#agent-cancel').addEventListener('click', () => this.closeForm());
    $('#person-form').addEventListener('submit', (e) => { e.preventDefault(); this.addPerson(); });
    $('#first-run-connect').addEventListener('click', () => { location.hash = '#agents'; this.openForm(); });
    this.dlg.addEventListener('close', () => this.stopTest());
  }

  /** reconnected loads shown or not: the first-run banner and the trust levels follow the agents. */
  reconnected() { this.reload(); }

  enter() { this.reload(); }

  async load() {
    try {
      const [a, p, st] = await Promise.all([this.rpc.call('agent.list'), this.rpc.call('person.list'), this.rpc.call('config.status')]);
      this.agents = a.agents || [];
      this.people = p.people || [];
      this.managed = a.managed;
      setAgentLevels(this.agents);
      this.render();
      this.configStatus(st);
    } catch (e) {
      if (e.kind !== 'io' && this.visible) toast(e.message, { kind: 'error' });
    }
  }

  configStatus(st) {
    const el = $('#config-status');
    let text = '';
    if (st.problem) text = `config.toml has a problem, so Corral kept what was running: ${st.problem}`;
    else if (st.restart_needed?.length) text = `config.toml changed ${st.restart_needed.join(', ')}: restart Corral for that to take effect. People and agents in the file are already in effect.`;
    el.hidden = !text;
    el.textContent = text;
  }

  /** firstRun: nobody has used an agent yet. */
  firstRun() { return !this.agents.some((a) => a.last_used); }

  render() {
    const first = this.firstRun();
    $('#agents-guide').hidden = !first;
    $('#first-run').hidden = !first || this.app.view === 'agents';
    document.body.dataset.agentsReady = '1';
    const list = $('#agent-list');
    list.replaceChildren(...connectOrder(this.agents).map((a) => this.row(a)));
    $('#agents-empty').hidden = this.agents.length > 0;
    const people = $('#person-list');
    people.replaceChildren(...this.people.map((p) => this.personRow(p)));
    // The person picker: people, then the two scopes that are not people.
    const sel = $('#agent-user');
    const keep = sel.value;
    sel.replaceChildren(...this.people.map((p) => h('option', { value: p.id }, `${p.name || p.id} (${p.id})`)),
      h('option', { value: 'companion' }, 'Companion (the phone app’s folder)'),
      h('option', { value: 'default' }, 'Default (a shared scratch folder)'));
    if (keep) sel.value = keep;
    // Whom it may act for: the same people and the companion's folder.
    const checked = new Set($$('#agent-actfor-list input:checked').map((i) => i.value));
    $('#agent-actfor-list').replaceChildren(...this.people.map((p) => ({ id: p.id, label: p.name || p.id }))
      .concat([{ id: 'companion', label: 'Companion' }])
      .map(({ id, label }) => h('label', null, h('input', { type: 'checkbox', value: id, checked: checked.has(id) }), label)));
  }

  row(a) {
    const badges = [];
    if (a.from_config) badges.push(h('span', { class: 'tag', title: 'Written in config.toml: its settings are read-only here; change them in that file (Corral picks the change up by itself)' }, 'from the config file (read-only)'));
    if (a.paused) badges.push(h('span', { class: 'tag warn' }, 'paused'));
    if (a.level === 'custom') {
      if (a.ask_commands) badges.push(h('span', { class: 'tag' }, 'commands need approval'));
      if (a.network === 'off') badges.push(h('span', { class: 'tag' }, 'no network'));
    }
    const used = a.last_used ? h('time', { datetime: a.last_used, title: full(a.last_used) }, `last used ${ago(a.last_used)}`) : h('span', { class: 'muted' }, 'never used yet');
    const actions = h('div', { class: 'row-actions' },
      h('button', { type: 'button', class: `btn small${a.from_config && !a.last_used ? '' : ' primary'}`, 'data-act': 'connect', onclick: () => this.openConnect(a.name) }, 'Connect an app…'),
      h('a', { class: 'btn small', href: `#activity?${new URLSearchParams({ client: a.name })}` }, 'Activity'),
      h('button', { type: 'button', class: 'btn small', 'data-act': 'pause', onclick: () => this.pause(a) }, a.paused ? 'Resume' : 'Pause'));
    if (!a.from_config) {
      actions.append(h('button', { type: 'button', class: 'btn small', 'data-act': 'edit', onclick: () => this.openForm(a) }, 'Edit'));
      const rotate = h('button', { type: 'button', class: 'btn small', 'data-act': 'rotate' }, 'Rotate key');
      confirmButton(rotate, 'Old key stops — rotate?', () => this.rotate(a.name));
      const remove = h('button', { type: 'button', class: 'btn small danger', 'data-act': 'remove' }, 'Remove');
      confirmButton(remove, `Remove ${a.name}?`, () => this.remove(a.name));
      actions.append(rotate, remove);
    }
    const person = this.people.find((p) => p.id === a.user);
    return h('li', { class: 'agent-row', dataset: { name: a.name, level: a.level } },
      h('div', { class: 'agent-main' },
        h('strong', { class: 'agent-name' }, a.name), ...badges,
        h('div', { class: 'muted small' }, `works in ${person ? `${person.name || person.id}’s` : scopeName(a.user)} folder`,
          a.act_for?.length ? ` · may act for ${a.act_for.includes('*') ? 'everyone' : a.act_for.join(', ')}` : '', ' · ', used),
        this.levelPicker(a),
        daySummary(this.rpc, a.name)),
      actions);
  }

  /**
   * levelPicker is the agent's trust level, changed in one click: each
   * level's words show under the buttons while one is pointed at or
   * focused, so the owner reads what it does before choosing it.
   */
  levelPicker(a) {
    const current = levelInfo(a.level);
    const words = h('p', { class: 'level-words small', role: 'status' });
    const say = (l) => {
      words.textContent = l ? `${l.label}: ${l.explain}` : `Custom: ${a.ask_commands ? 'each command is asked' : 'commands run without asking'}; network ${a.network === 'off' ? 'never' : 'asked per domain'}. Choose a level to replace these settings.`;
    };
    const buttons = allLevels().map((l) => {
      const b = h('button', { type: 'button', class: 'level-opt', role: 'radio', 'aria-checked': String(l.level === a.level), dataset: { level: l.level }, title: l.explain }, l.label);
      b.addEventListener('mouseenter', () => say(l));
      b.addEventListener('focus', () => say(l));
      b.addEventListener('mouseleave', () => say(current));
      b.addEventListener('blur', () => say(current));
      b.addEventListener('click', () => { if (l.level !== a.level) this.setLevel(a, l); });
      return b;
    });
    say(current);
    return h('div', { class: 'level-picker' },
      h('div', { class: 'level-group', role: 'radiogroup', 'aria-label': `Trust level of ${a.name}` },
        h('span', { class: 'level-label small muted' }, 'Trust level'), ...buttons,
        a.level === 'custom' ? h('span', { class: 'level-opt custom', 'aria-checked': 'true', role: 'radio', 'aria-disabled': 'true' }, 'Custom') : null),
      words);
  }

  async setLevel(a, l) {
    try {
      await this.rpc.call('agent.set_level', { name: a.name, level: l.level });
      toast(`${a.name} is now ${l.label}: its next call works that way.`);
      await this.load();
      $(`#agent-list li[data-name="${CSS.escape(a.name)}"] .level-opt[data-level="${l.level}"]`)?.focus();
    } catch (e) { toast(e.message, { kind: 'error' }); }
  }

  /**
   * formLevels fills the form's level choice: each level with its words,
   * and Custom. Choosing a level sets the settings below to its own;
   * changing a setting by hand chooses the level those settings make, or
   * Custom.
   */
  formLevels(chosen) {
    const box = $('#agent-levels');
    const opt = (value, label, explain) => h('label', { class: 'level-choice' },
      h('input', { type: 'radio', name: 'agent-level', value, checked: value === chosen }),
      h('span', null, h('strong', null, label), h('span', { class: 'muted small' }, explain)));
    box.replaceChildren(h('legend', null, 'Trust level'),
      ...allLevels().map((l) => opt(l.level, l.label, l.explain)),
      opt('custom', 'Custom', 'The settings below, as you set them.'));
    for (const i of $$('input', box)) {
      i.addEventListener('change', () => {
        const l = levelInfo(i.value);
        if (!l) return;
        $('#agent-ask').checked = l.ask_commands;
        $('#agent-network').value = l.network;
      });
    }
    if (!this.levelSync) {
      this.levelSync = true;
      const mine = () => {
        const ask = $('#agent-ask').checked;
        const net = $('#agent-network').value;
        const l = allLevels().find((x) => !x.read_only && x.ask_commands === ask && x.network === net);
        const r = $(`#agent-levels input[value="${l ? l.level : 'custom'}"]`);
        if (r) r.checked = true;
      };
      $('#agent-ask').addEventListener('change', mine);
      $('#agent-network').addEventListener('change', mine);
    }
    const l = levelInfo(chosen);
    if (l) {
      $('#agent-ask').checked = l.ask_commands;
      $('#agent-network').value = l.network;
    }
  }

  formLevel() { return $('#agent-levels input:checked')?.value || 'ask'; }

  personRow(p) {
    const name = h('strong', null, p.name || p.id);
    const li = h('li', { class: 'person-row', dataset: { id: p.id } },
      h('div', { class: 'agent-main' }, name, ' ', h('code', null, p.id),
        p.from_config ? h('span', { class: 'tag' }, 'from the config file') : '',
        h('div', { class: 'muted small' }, `folder ${p.folder}`, p.agents.length ? ` · agents: ${p.agents.join(', ')}` : '')));
    if (!p.from_config) {
      const rename = h('button', { type: 'button', class: 'btn small', 'data-act': 'rename', onclick: () => this.renameForm(li, p) }, 'Rename');
      const remove = h('button', { type: 'button', class: 'btn small danger', 'data-act': 'remove' }, 'Remove');
      confirmButton(remove, `Remove ${p.id}? (folder kept)`, () => this.removePerson(p.id));
      li.append(h('div', { class: 'row-actions' }, rename, remove));
    }
    return li;
  }

  renameForm(li, p) {
    const input = h('input', { type: 'text', value: p.name, 'aria-label': `New name for ${p.id}`, maxlength: 100 });
    const form = h('form', { class: 'inline-form' }, input, h('button', { type: 'submit', class: 'btn small primary' }, 'Save'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        await this.rpc.call('person.rename', { id: p.id, name: input.value });
        toast('Renamed.');
        this.load();
      } catch (err) { toast(err.message, { kind: 'error' }); }
    });
    li.append(form);
    input.focus();
  }

  /** openForm opens the form to add an agent, or to change a (one not from config.toml). */
  openForm(a) {
    const f = $('#agent-form');
    f.reset();
    this.editing = a ? a.name : '';
    $('#h-agent-form').textContent = a ? `Change ${a.name}` : 'Add an agent';
    $('#agent-name').disabled = !!a;
    $('#agent-create').hidden = !!a;
    $('#agent-save').hidden = !a;
    const actFor = a?.act_for || [];
    const mode = actFor.includes('*') ? 'everyone' : actFor.length ? 'some' : 'none';
    $('#agent-actfor').value = mode;
    $('#agent-actfor-people').hidden = mode !== 'some';
    for (const i of $$('#agent-actfor-list input')) i.checked = mode === 'some' && actFor.includes(i.value);
    if (a) {
      $('#agent-name').value = a.name;
      $('#agent-user').value = a.user;
      $('#agent-ask').checked = a.ask_commands;
      $('#agent-network').value = a.network;
    }
    this.formLevels(a ? a.level : 'ask');
    f.hidden = false;
    $('#agent-key').hidden = true;
    f.scrollIntoView({ block: 'nearest' });
    (a ? $('#agent-user') : $('#agent-name')).focus();
  }

  closeForm() {
    $('#agent-form').hidden = true;
    $('#agent-form').reset();
    $('#agent-name').disabled = false;
    this.editing = '';
  }

  /** settings reads the form's settings, or says why it cannot. */
  settings() {
    const mode = $('#agent-actfor').value;
    const actFor = mode === 'everyone' ? ['*'] : mode === 'some' ? $$('#agent-actfor-list input:checked').map((i) => i.value) : [];
    if (mode === 'some' && !actFor.length) throw new Error('Pick the people it may act for, or choose “Nobody else”.');
    const level = this.formLevel();
    if (level !== 'custom') return { user: $('#agent-user').value, act_for: actFor, level };
    return { user: $('#agent-user').value, act_for: actFor, ask_commands: $('#agent-ask').checked, network: $('#agent-network').value };
  }

  async save() {
    const name = this.editing;
    try {
      await this.rpc.call('agent.update', { name, ...this.settings() });
      this.closeForm();
      toast(`${name} is changed: its next call works with the new settings.`);
      await this.load();
    } catch (e) {
      toast(e.message, { kind: 'error' });
    }
  }

  async add() {
    try {
      const params = { name: $('#agent-name').value.trim(), ...this.settings() };
      const r = await this.rpc.call('agent.add', params);
      this.keys.set(r.agent.name, r.key);
      this.closeForm();
      this.showKey(r.agent.name, r.key);
      await this.load();
      this.openConnect(r.agent.name);
    } catch (e) {
      toast(e.message, { kind: 'error' });
    }
  }

  showKey(name, key) {
    const box = $('#agent-key');
    box.hidden = false;
    $('#agent-key-name').textContent = name;
    $('#agent-key-value').textContent = key;
  }

  async pause(a) {
    try {
      await this.rpc.call(a.paused ? 'agent.resume' : 'agent.pause', { name: a.name });
      toast(a.paused ? `${a.name} may work again.` : `${a.name} is paused: every call it makes is refused.`);
      this.load();
    } catch (e) { toast(e.message, { kind: 'error' }); }
  }

  async rotate(name) {
    try {
      const r = await this.rpc.call('agent.rotate_key', { name });
      this.keys.set(name, r.key);
      this.showKey(name, r.key);
      toast('New key made; the old one stopped working. Connect the app again with it.');
      this.openConnect(name);
    } catch (e) { toast(e.message, { kind: 'error' }); }
  }

  async remove(name) {
    try {
      await this.rpc.call('agent.remove', { name });
      this.keys.delete(name);
      toast(`${name} was removed; its key no longer works.`);
      this.load();
    } catch (e) { toast(e.message, { kind: 'error' }); }
  }

  async addPerson() {
    const input = $('#person-name');
    try {
      const r = await this.rpc.call('person.add', { name: input.value });
      toast(`${r.person.name} has a folder now: ${r.person.folder}`);
      input.value = '';
      this.load();
      this.app.refreshInfo();
    } catch (e) { toast(e.message, { kind: 'error' }); }
  }

  async removePerson(id) {
    try {
      const r = await this.rpc.call('person.remove', { id });
      toast(r.message, { timeout: 15000 });
      this.load();
      this.app.refreshInfo();
    } catch (e) { toast(e.message, { kind: 'error', timeout: 10000 }); }
  }

  // ---------- the connect dialog ----------

  async openConnect(name) {
    this.stopTest();
    const key = this.keys.get(name);
    $('#connect-title').textContent = `Connect ${name}`;
    const body = $('#connect-body');
    body.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
    if (!this.dlg.open) this.dlg.showModal();
    let r;
    try {
      r = await this.rpc.call('agent.connect', key ? { name, key } : { name });
    } catch (e) {
      body.replaceChildren(h('p', { class: 'notice' }, e.message));
      return;
    }
    const picker = h('div', { class: 'app-picker', role: 'tablist', 'aria-label': 'Agent app' });
    const pane = h('div', { class: 'app-pane' });
    const pick = (app, btn) => {
      for (const b of picker.children) b.setAttribute('aria-selected', String(b === btn));
      pane.replaceChildren(...this.appPane(name, key, app));
    };
    for (const app of r.apps) {
      const btn = h('button', { type: 'button', class: 'btn small', role: 'tab', 'aria-selected': 'false', dataset: { app: app.id } }, app.title);
      btn.addEventListener('click', () => pick(app, btn));
      picker.append(btn);
    }
    const intro = key
      ? h('p', null, 'Pick the app the agent runs in. Each setup below already holds this agent’s key; keep it private.')
      : r.config_file ? this.configKeyNotice(name, r.config_file)
        : h('p', { class: 'notice' }, 'Corral keeps only a fingerprint of this agent’s key, so the setups below have a placeholder. ',
          h('button', { type: 'button', class: 'btn small', onclick: () => this.rotate(name) }, 'Make a new key'));
    const test = h('div', { class: 'test-conn' },
      h('button', { type: 'button', class: 'btn', id: 'connect-test', onclick: () => this.startTest(name) }, 'Test connection'),
      h('span', { id: 'connect-test-result', role: 'status', class: 'muted' }, 'Start the app and ask it to list its files; its first call shows here.'));
    body.replaceChildren(intro, picker, pane, test);
    pick(r.apps[0], picker.firstElementChild);
  }

  /**
   * configKeyNotice says where the key of an agent written in config.toml
   * is (it cannot be rotated here), and takes it, pasted, to fill in and
   * write the setups; the daemon checks it against the agent's key.
   */
  configKeyNotice(name, file) {
    const input = h('input', { type: 'password', id: 'connect-key', autocomplete: 'off', spellcheck: 'false', placeholder: 'corral_…' });
    const use = async (e) => {
      e.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      try {
        await this.rpc.call('agent.connect', { name, key });
        this.keys.set(name, key);
        this.openConnect(name);
      } catch (err) { toast(err.message, { kind: 'error', timeout: 10000 }); }
    };
    return h('form', { class: 'notice config-key', onsubmit: use },
      h('span', null, `${name} is written in `, h('code', null, file), ': its key is the ', h('code', null, 'key = "…"'),
        ` line of its [[clients]] entry there (an entry with only key_sha256 keeps it elsewhere). The setups below show where it goes. Paste it here to fill them in and write them:`),
      h('label', { for: 'connect-key', class: 'sr-only' }, `${name}’s key`), input,
      h('button', { type: 'submit', class: 'btn small' }, 'Use this key'));
  }

  appPane(name, key, app) {
    const out = [];
    const pre = h('pre', { class: 'snippet', tabindex: '0', dataset: { app: app.id } }, app.snippet);
    if (app.format === 'command') out.push(h('p', null, 'Run this in a terminal:'));
    else if (app.path) out.push(h('p', { class: 'where' }, app.format === 'yaml' ? 'In ' : 'Add this to ', h('code', null, app.path), app.exists ? ' (it is on this computer)' : app.writable ? ' (not on this computer yet: Write creates it)' : ' (not on this computer yet)', ':'));
    out.push(pre, h('div', { class: 'detail-actions' },
      h('button', { type: 'button', class: 'btn', 'data-act': 'copy', onclick: () => copyText(app.snippet, pre) }, 'Copy'),
      app.writable ? h('button', { type: 'button', class: 'btn primary', 'data-act': 'preview', onclick: () => this.preview(name, key, app, plan) }, `Write into ${app.path.split('/').pop()}…`) : ''));
    const plan = h('div', { class: 'plan' });
    out.push(plan, h('p', { class: 'muted small' }, app.note), h('p', { class: 'muted small' }, `Format and file: ${app.doc}`));
    return out;
  }

  async preview(name, key, app, box) {
    try {
      const p = await this.rpc.call('agent.connect_preview', { name, key, app: app.id });
      if (p.unchanged) {
        box.replaceChildren(h('p', { class: 'notice' }, `${p.path} already holds this setup.`));
        return;
      }
      const write = h('button', { type: 'button', class: 'btn primary', 'data-act': 'write' }, 'Write it');
      write.addEventListener('click', async () => {
        write.disabled = true;
        try {
          const w = await this.rpc.call('agent.connect_write', { name, key, app: app.id, digest: p.digest });
          const linked = w.link ? ` ${w.link} now leads to this Corral.` : '';
          if (w.creates) { // the file is there now
            app.exists = true;
            box.parentElement?.querySelector('p.where')?.replaceChildren('Add this to ', h('code', null, app.path), ' (it is on this computer):');
          }
          box.replaceChildren(h('p', { class: 'notice ok', role: 'status', dataset: { written: '1' } },
            w.creates ? `Created ${w.path}.${linked}` : `Written into ${w.path}. The old file is kept as ${w.backup}.${linked}`));
        } catch (e) {
          write.disabled = false;
          toast(e.message, { kind: 'error', timeout: 10000 });
        }
      });
      box.replaceChildren(h('p', null, p.creates ? `Corral will create ${p.path} (with its folder) holding this:` : `Corral will change ${p.path} like this (a backup is kept):`),
        h('pre', { class: 'diff' }, ...p.diff.split('\n').map((l) => h('span', { class: l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : '' }, `${l}\n`))),
        h('div', { class: 'detail-actions' }, write));
    } catch (e) {
      box.replaceChildren(h('p', { class: 'notice', role: 'alert' }, e.message));
    }
  }

  /**
   * startTest waits for the agent's next call on the live audit stream
   * (audit.subscribe; the dashboard's connection may already have it),
   * so the call shows the moment it is recorded.
   */
  async startTest(name) {
    this.stopTest();
    const out = $('#connect-test-result');
    out.textContent = 'Waiting for the agent’s first call…';
    delete out.dataset.arrived;
    this.testing = name;
    try {
      await this.rpc.call('audit.subscribe');
    } catch (e) {
      if (this.testing === name) { out.textContent = e.message; this.stopTest(); }
      return;
    }
    if (this.testing !== name) return; // arrived already, or the dialog closed
    out.dataset.listening = '1';
    this.testTimer = setTimeout(() => {
      out.textContent = 'Nothing arrived in 5 minutes. Check the app’s own MCP log, then try again.';
      this.stopTest();
    }, TEST_GIVE_UP_MS);
  }

  onAuditEvent(ev) {
    const name = this.testing;
    if (!name || !ev || ev.client !== name) return;
    const out = $('#connect-test-result');
    out.replaceChildren(h('strong', { class: 'ok' }, 'Connected. '), `${name} called ${ev.op} ${ev.target || ''} ${ago(ev.time)} — `, h('a', { href: `#activity?${new URLSearchParams({ client: name })}` }, 'see its activity'));
    out.dataset.arrived = '1';
    this.stopTest();
    this.load();
  }

  stopTest() {
    if (this.testTimer) clearTimeout(this.testTimer);
    this.testTimer = 0;
    this.testing = '';
    delete $('#connect-test-result')?.dataset.listening;
  }
}
