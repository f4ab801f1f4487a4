// Corral's dashboard: one WebSocket to /ws (the session cookie and its
// second secret are the credential), five views chosen by the URL hash ("#event=ID" opens
// one event's detail on the activity), and a header that shows the
// pending count and pauses agents. A paired device's session gets no
// Devices view: the server would refuse its calls anyway.
import { Rpc } from './lib/rpc.js';
import { $, $$, h } from './lib/dom/h.js';
import { toast } from './lib/dom/ui.js';
import { plural } from './lib/dom/format.js';
import { setVocabulary } from './lib/dom/names.js';
import { Approvals } from './views/approvals/approvals.js';
import { Activity } from './views/activity/activity.js';
import { Rules } from './views/rules/rules.js';
import { Files } from './views/files/files.js';
import { Devices } from './views/devices/devices.js';
import { SharedLinks } from './views/shared/shared.js';
import { Agents } from './views/agents/agents.js';
import { Changes } from './views/changes/changes.js';
import { AllDays } from './views/agents/daysummary.js';
import { Settings } from './views/settings/settings.js';
import { Notifier } from './lib/notify.js';
import './lib/layout.js';
import { words } from './lib/words.js';
import { setLevels, setAgentLevels } from './lib/levels.js';

performance.mark('corral:start');

const titles = { approvals: 'Approvals', activity: 'Activity', changes: 'What changed', rules: 'Rules', files: 'Files', devices: 'Devices', shared: 'Shared links', agents: 'Agents', settings: 'Settings' };
const bootedWithoutHash = !location.hash || location.hash === '#';

// The cookie's second secret: the owner's tab got it from the one-time
// login page, a paired device from its pairing (auth.go on the server).
const secrets = [sessionStorage.getItem('corral.secret'), localStorage.getItem('corral.device')].filter(Boolean);
const rpc = new Rpc(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`,
  ['corral', ...secrets.map((v) => `corral.secret.${v}`)]);
rpc.connect(); // at once: the views register their "open" handlers before it can fire

let infoArrived;
const app = {
  rpc,
  info: null,
  // Resolved by the first session.info: the views name operations and
  // decisions in the server's words (setVocabulary) once it has come.
  infoReady: new Promise((resolve) => { infoArrived = resolve; }),
  device: false, // the page runs on a paired device's session
  pending: 0,
  view: '',
  firstSync: true,

  setPending(n) {
    this.pending = n;
    const badge = $('#pending-badge');
    badge.hidden = n === 0;
    badge.textContent = String(n);
    badge.setAttribute('aria-label', `${plural(n, 'request')} waiting`);
    const banner = $('#pending-banner');
    banner.hidden = n === 0 || this.view === 'approvals';
    $('#pending-banner-text').textContent = n === 1 ? 'An agent is waiting for your answer.' : `${n} requests are waiting for your answer.`;
    this.title();
    // The first time approvals are known: if something is waiting and the
    // owner did not ask for a particular view, show the approvals.
    if (this.firstSync && approvals.synced) {
      this.firstSync = false;
      if (n > 0 && bootedWithoutHash && this.view === 'activity') {
        history.replaceState(null, '', '#approvals');
        route();
      }
    }
  },

  title() {
    document.title = `${this.pending ? `(${this.pending}) ` : ''}Corral — ${titles[this.view] || 'Dashboard'}`;
  },

  setActivityHash(hash) {
    $('.tab[data-tab="activity"]').setAttribute('href', hash);
    $('.brand').setAttribute('href', hash);
  },

  rulesChanged() { rules.changed(); },

  async refreshInfo() {
    try {
      const info = await rpc.call('session.info');
      this.info = info;
      setVocabulary(info);
      setLevels(info);
      if (info.role === 'owner' && !String(info.client || '').startsWith('device:')) rpc.call('agent.list').then((r) => setAgentLevels(r.agents)).catch(() => {});
      activity.vocabulary();
      infoArrived();
      setDevice(String(info.client || '').startsWith('device:'));
      document.body.dataset.infoReady = '1';
      $('#about-version').textContent = info.version || '';
      setPaused(info.paused);
      const banner = $('#audit-banner');
      banner.hidden = !info.audit_problem;
      banner.textContent = info.audit_problem ? `Agents are refused: ${info.audit_problem}` : '';
      recovered(info.recovered);
      showAuditSize(info.audit_log);
      activity.setScopes(info.scopes || []);
      if (this.view === 'files' && files.waiting) route();
    } catch (e) {
      if (e.kind !== 'io') toast(e.message, { kind: 'error' });
    }
  },
};

// recovered says once per tab what Corral finished at its last start
// after a crash or kill (session.info.recovered).
function recovered(r) {
  if (!r || sessionStorage.getItem('corral-recovered') === r.at) return;
  sessionStorage.setItem('corral-recovered', r.at);
  const calls = r.events === 1 ? '1 call' : `${r.events} calls`;
  let text = `Corral was stopped in the middle of work (a crash or a kill). When it started again it finished ${calls} that were interrupted, putting back ${r.rolled_back} change(s)`;
  if (r.left) text += ` and leaving ${r.left} that changed again since`;
  if (r.temp_files) text += `, and removed ${r.temp_files} temporary file(s)`;
  toast(`${text}. The log marks those calls "interrupted".`, { timeout: 20000 });
}

// showAuditSize says how much room the audit log takes and how fast it
// grows (session.info's audit_log, owner only).
function showAuditSize(log) {
  const line = $('#audit-size');
  if (!line) return;
  line.hidden = !log;
  if (!log) return;
  const n = (v) => Number(v || 0).toLocaleString();
  line.textContent = `Audit log on disk: ${bytes(log.bytes)} (database ${bytes(log.db_bytes)}, write-ahead log ${bytes(log.wal_bytes)}) · ` +
    `${n(log.events_last_hour)} events in the last hour, ${n(log.events_last_minute)} in the last minute.`;
  line.title = log.per_agent_limit || '';
}

function bytes(v) {
  const b = Number(v || 0);
  if (b < 1024) return `${b} B`;
  if (b < 1024 * 1024) return `${(b / 1024).toFixed(1)} KB`;
  if (b < 1024 * 1024 * 1024) return `${(b / 1024 / 1024).toFixed(1)} MB`;
  return `${(b / 1024 / 1024 / 1024).toFixed(2)} GB`;
}

// setDevice hides what a paired device may not use (pairing, the device
// list) and leaves that view if it is open.
function setDevice(device) {
  app.device = device;
  $('.tab[data-tab="devices"]').hidden = device;
  $('.tab[data-tab="agents"]').hidden = device;
  $('.tab[data-tab="changes"]').hidden = device;
  if (device && (app.view === 'devices' || app.view === 'agents' || app.view === 'changes')) {
    history.replaceState(null, '', '#activity');
    route();
  }
}

function setPaused(paused) {
  if (app.info) app.info.paused = paused;
  const b = $('#pause');
  b.disabled = false;
  b.setAttribute('aria-pressed', String(paused));
  b.textContent = paused ? words.resume_agents : words.pause_agents;
  $('#paused-banner').hidden = !paused;
}

async function togglePause() {
  const paused = !!app.info?.paused;
  try {
    const r = await rpc.call(paused ? 'agents.resume' : 'agents.pause');
    setPaused(r.paused);
    toast(r.paused ? 'Agents are paused.' : 'Agents may work again.');
  } catch (e) {
    toast(e.message, { kind: 'error' });
  }
}

const approvals = new Approvals(app);
new Notifier(app); // eslint-disable-line no-new
const activity = new Activity(app);
const rules = new Rules(app);
const files = new Files(app);
const devices = new Devices(app);
const agents = new Agents(app);
new AllDays(app); // eslint-disable-line no-new
const shared = new SharedLinks(app);
const changes = new Changes(app);
const settings = new Settings(app);
const views = { approvals, activity, changes, rules, files, devices, shared, agents, settings };

function route() {
  let raw = location.hash.replace(/^#\/?/, '');
  // "#event=ID" (the tray's Recent activity opens the dashboard there):
  // the activity as it was, with that event's detail open.
  const event = /^event=(\d+)$/.exec(raw);
  if (event) {
    history.replaceState(null, '', activity.hash || '#activity');
    raw = location.hash.replace(/^#\/?/, '');
  }
  const q = raw.indexOf('?');
  let name = q < 0 ? raw : raw.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  if (!views[name] || ((name === 'devices' || name === 'agents' || name === 'changes') && app.device)) name = 'activity';
  const changed = app.view !== name;
  app.view = name;
  for (const v of Object.keys(views)) {
    $(`#view-${v}`).hidden = v !== name;
    if (v !== name) views[v].hide?.();
  }
  for (const t of $$('.tab')) {
    if (t.dataset.tab === name) t.setAttribute('aria-current', 'page');
    else t.removeAttribute('aria-current');
  }
  views[name].show?.(params);
  if (name === 'agents') $('#first-run').hidden = true;
  if (event) activity.openEvent(Number(event[1]));
  app.setPending(app.pending);
  if (changed && document.activeElement?.closest('.tabs')) $('#main').focus({ preventScroll: true });
}

rpc.addEventListener('state', (e) => {
  const el = $('#conn');
  el.dataset.state = e.detail;
  $('.conn-label', el).textContent = { open: 'Connected', closed: 'Reconnecting…', refused: 'Signed out' }[e.detail] || 'Connecting…';
  if (e.detail === 'refused') showSignedOut();
  if (e.detail === 'closed' && rpc.failures === 3) {
    toast('Corral cannot be reached; this page keeps trying. Is Corral running on the computer?', { kind: 'error', timeout: 15000 });
  }
});

// showSignedOut: the server refuses this page's login (signed out
// elsewhere, revoked, expired). Say so and show the way back instead of
// reconnecting for ever.
function showSignedOut() {
  const device = !sessionStorage.getItem('corral.secret') && !!localStorage.getItem('corral.device');
  document.body.dataset.signedOut = device ? 'device' : 'owner';
  $('#login-banner-title').textContent = device ? 'This phone is no longer paired.' : 'Your login no longer works.';
  $('#login-banner-text').textContent = device
    ? 'It was signed out or removed on the computer. To pair it again, open Corral’s dashboard on the computer, choose Devices → Pair a phone, and scan the new code.'
    : 'It ended, was signed out, or expired. Run “corral open” or choose Open dashboard in the Corral tray for a fresh login.';
  $('#login-banner').hidden = false;
  $('#notify-on').hidden = true;
  $('#pause').disabled = true;
  if (device) localStorage.removeItem('corral.device');
}
rpc.addEventListener('open', () => {
  app.refreshInfo();
  rpc.call('client.list').then((r) => {
    const names = (r.clients || []).map((c) => c.name);
    activity.addClients(names);
    changes.setClients(names);
  }).catch(() => {});
});

// The audit log can become unwritable (a full disk) without any event
// saying so: look now and then while the page is visible.
setInterval(() => { if (!document.hidden && rpc.ws?.readyState === WebSocket.OPEN) app.refreshInfo(); }, 15000);

// Sign out carries the second secret too: the cookie alone signs nobody out.
$('form.signout').addEventListener('submit', (e) => {
  const field = h('input', { type: 'hidden', name: 'secret' });
  field.value = sessionStorage.getItem('corral.secret') || localStorage.getItem('corral.device') || '';
  e.currentTarget.append(field);
  // A phone signs itself out for good (the server revokes it): forget its secret too.
  if (!sessionStorage.getItem('corral.secret')) localStorage.removeItem('corral.device');
});
if (!secrets.length) {
  toast('This tab is not signed in. Run “corral open” or choose Open dashboard in the Corral tray.', { kind: 'error', timeout: 60000 });
}

$('#pause').addEventListener('click', togglePause);
$('#resume-inline').addEventListener('click', togglePause);
document.addEventListener('keydown', (e) => {
  if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.target.closest('input, select, textarea, [contenteditable]')) return;
  if (app.view !== 'activity') return;
  e.preventDefault();
  $('#filters-wrap').open = true;
  $('#f-text').focus();
});
// The skip link must not change the hash (that picks the view).
$('.skip').addEventListener('click', (e) => {
  e.preventDefault();
  $('#main').focus();
});
// The dialogs close by their close button or a click on the backdrop.
for (const dlg of $$('dialog')) {
  $('.detail-head button', dlg).addEventListener('click', () => dlg.close());
  dlg.addEventListener('click', (e) => { if (e.target === dlg) dlg.close(); });
}
window.addEventListener('hashchange', route);
route();
