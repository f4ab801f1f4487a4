// Small DOM and formatting helpers. Every string from the server goes into
// the page as text (textContent or an attribute value), never as markup;
// the page's Trusted Types policy would refuse markup from strings anyway.
// Text that h() and s() put on screen (children, text, title, aria-label)
// passes through visible(): an agent's control characters and bidi
// overrides are shown as escapes, never as themselves.

import { netDecidedBy } from './netlabels.js';

// Control (Cc), format (Cf: bidi embeddings, overrides and isolates,
// zero-width characters) and lone surrogate (Cs) code points, and the
// line and paragraph separators. The server's core/visible makes the same
// characters visible for its own surfaces.
import { words } from './words.js';

const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;
const HIDDEN_ALL = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/gu;

/** visible shows s with every hidden character as an escape (\x1b,
 * \u202e); tab and newline are kept unless line is set. */
export function visible(s, line = false) {
  s = String(s);
  if (!HIDDEN.test(s)) return s;
  return s.replace(HIDDEN_ALL, (c) => {
    if (!line && (c === '\n' || c === '\t')) return c;
    const cp = c.codePointAt(0);
    if (cp < 0x100) return `\\x${cp.toString(16).padStart(2, '0')}`;
    if (cp > 0xffff) return `\\u{${cp.toString(16)}}`;
    return `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

/** h builds an element: h('a', {href, class, onclick}, 'text', child…). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  add(el, children);
  return el;
}

const SVGNS = 'http://www.w3.org/2000/svg';

/** s builds an SVG element. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVGNS, tag);
  setAttrs(el, attrs);
  add(el, children);
  return el;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = visible(v);
    else if (k === 'title' || k === 'aria-label') el.setAttribute(k, visible(v));
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function add(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : visible(c));
  }
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/** icon returns a small inline SVG from a path list. */
export function icon(...paths) {
  return s('svg', { viewBox: '0 0 24 24', 'aria-hidden': 'true' }, paths.map((d) => s('path', { d })));
}

export const icons = {
  file: () => icon('M6 3h8l4 4v14H6z', 'M14 3v4h4'),
  folder: () => icon('M3 7a2 2 0 012-2h4l2 2h8a2 2 0 012 2v8a2 2 0 01-2 2H5a2 2 0 01-2-2z'),
  star: () => icon('M12 3l2.6 5.6 6 .7-4.5 4.1 1.2 6L12 16.5 6.7 19.4l1.2-6L3.4 9.3l6-.7z'),
  share: () => icon('M4 12v7h16v-7', 'M12 3v12', 'M7 8l5-5 5 5'),
  link: () => icon('M10 14a4 4 0 005.7 0l3-3a4 4 0 00-5.7-5.7l-1 1', 'M14 10a4 4 0 00-5.7 0l-3 3a4 4 0 005.7 5.7l1-1'),
  open: () => icon('M14 4h6v6', 'M20 4l-9 9', 'M18 14v5a1 1 0 01-1 1H5a1 1 0 01-1-1V7a1 1 0 011-1h5'),
  user: () => icon('M12 12a4 4 0 100-8 4 4 0 000 8z', 'M4 21a8 8 0 0116 0'),
  phone: () => icon('M8 2h8a1 1 0 011 1v18a1 1 0 01-1 1H8a1 1 0 01-1-1V3a1 1 0 011-1z', 'M11 18h2'),
  home: () => icon('M3 11l9-7 9 7', 'M5 10v10h14V10'),
};

// ---------- time and size ----------

/** pad writes a number with at least two digits. */
export const pad = (n) => String(n).padStart(2, '0');

// Intl formatters are costly to make and cheap to use: make each once.
const fmt = {
  weekday: new Intl.DateTimeFormat(undefined, { weekday: 'short' }),
  dayMonth: new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' }),
  dayMonthYear: new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' }),
  full: new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }),
  number: new Intl.NumberFormat(),
};

/** dateFormat returns a cached Intl.DateTimeFormat for options. */
const formats = new Map();
export function dateFormat(opts) {
  const key = JSON.stringify(opts);
  let f = formats.get(key);
  if (!f) formats.set(key, (f = new Intl.DateTimeFormat(undefined, opts)));
  return f;
}

/** num formats a count with the locale's separators. */
export const num = (n) => fmt.number.format(n);

/** when formats an event time for the table: time today, weekday this week, date otherwise. */
export function when(iso, now = new Date()) {
  const d = new Date(iso);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (d.toDateString() === now.toDateString()) return `Today ${hm}`;
  const age = now - d;
  if (age >= 0 && age < 6 * 864e5) return `${fmt.weekday.format(d)} ${hm}`;
  const day = d.getFullYear() === now.getFullYear() ? fmt.dayMonth : fmt.dayMonthYear;
  return `${day.format(d)} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** full is a complete local date and time. */
export function full(iso) {
  return fmt.full.format(new Date(iso));
}

/** ago says how long ago (or how far ahead) a time is, in words. */
export function ago(iso, now = Date.now()) {
  const ms = new Date(iso).getTime() - now;
  const past = ms < 0;
  const sec = Math.abs(ms) / 1000;
  let text;
  if (sec < 45) text = 'a moment';
  else if (sec < 90 * 60) text = plural(Math.round(sec / 60), 'minute');
  else if (sec < 36 * 3600) text = plural(Math.round(sec / 3600), 'hour');
  else if (sec < 60 * 86400) text = plural(Math.round(sec / 86400), 'day');
  else text = plural(Math.round(sec / (30 * 86400)), 'month');
  if (text === 'a moment') return past ? 'just now' : 'in a moment';
  return past ? `${text} ago` : `in ${text}`;
}

export function plural(n, word) {
  return `${num(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** clock formats seconds as m:ss or h:mm:ss. */
export function clock(sec) {
  sec = Math.max(0, Math.round(sec));
  const hh = Math.floor(sec / 3600), mm = Math.floor((sec % 3600) / 60), ss = sec % 60;
  return hh ? `${hh}:${pad(mm)}:${pad(ss)}` : `${mm}:${pad(ss)}`;
}

export function size(n) {
  if (n === null || n === undefined) return '';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** isoSeconds is an RFC 3339 UTC time without fractions. */
export function isoSeconds(d) {
  return new Date(d).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** localInput formats a time for <input type=datetime-local>. */
export function localInput(iso) {
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// ---------- words for Corral's vocabulary ----------

/** who names the client that did or decided something, as core/words.Who:
 * "you" for the owner's own surfaces, a paired device by its name, an
 * agent by its name. */
export function who(client) {
  const c = String(client || '');
  if (c.startsWith(words.device_prefix)) return c.slice(words.device_prefix.length);
  if (c.startsWith('dashboard:') || words.owner_clients.includes(c)) return words.you;
  return c;
}

// The operations and decisions, their labels and groups, are the server's
// (session.info's operations and decisions, from core/audit's table):
// setVocabulary takes them, and until then a name stands for itself.
const vocab = { ops: new Map(), decisions: new Map(), said: new Map() };

/** setVocabulary takes session.info's operations and decisions. */
export function setVocabulary(info) {
  if (info.operations) vocab.ops = new Map(info.operations.map((o) => [o.op, o]));
  if (info.decisions) vocab.decisions = new Map(info.decisions.map((d) => [d.decision, d.label]));
  if (info.choices) vocab.said = new Map(info.choices.map((c) => [c.decision, c.said]));
}

/** operations lists every operation's name, in the server's order. */
export const operations = () => [...vocab.ops.keys()];
/** opIn reports whether op is in one of the server's groups ("looks", "path", "corral", "owner", "command"). */
export const opIn = (group, op) => !!vocab.ops.get(op)?.groups?.includes(group);
/** opsIn lists the operations of a group. */
export const opsIn = (group) => operations().filter((op) => opIn(group, op));
export const opName = (op) => vocab.ops.get(op)?.label || words.operations.find((o) => o.op === op)?.label || op;
/** decisions lists the decisions' names, in the server's order. */
export const decisions = () => [...vocab.decisions.keys()];
export const decisionName = (d) => vocab.decisions.get(d) || words.decisions[d] || d;

/**
 * answered says how the owner answered e's question and where:
 * "Allowed once by you on Pixel (phone)"; '' when nobody was asked. A
 * device's name is the phone's own (shown as text, like everything).
 */
export function answered(e) {
  if (!e.answer) return '';
  const said = vocab.said.get(e.answer) || e.answer;
  const by = e.answered_by || '';
  let where = '';
  if (by === 'dialog') where = ' in the desktop dialog';
  else if (by === 'cli') where = ' from the command line (corral approve)';
  else if (by.startsWith('dashboard:')) where = ` in the dashboard (${by.slice('dashboard:'.length)} on this computer)`;
  else if (by.startsWith('device:')) where = ` on ${by.slice('device:'.length)} (phone)`;
  else if (by) where = ` from ${by}`;
  return `${said.charAt(0).toUpperCase()}${said.slice(1)} by you${where}`;
}

// What the owner's side does itself is recorded as decided by "owner",
// like an answer to a question; these say what it was instead.
const ownerActs = {
  'device.pair': ['A pairing code you showed', 'The device named itself with a one-time pairing code that you had shown.', 'pairing code'],
  'command.cancel': ['Stopping is always allowed', 'An agent may stop its own commands, and you may stop any.', 'always allowed'],
};

/** eventScope names the folder an event happened in, for the table and the detail. */
export function eventScope(e) {
  if (e.user) return scopeName(e.user);
  return opIn('corral', e.op) ? 'All folders' : '—';
}

/** scopePhrase ends the detail's sentence: "in alice’s folder", "for all folders",
 * "outside the agents’ folders" (a host path: the agent asked for a place
 * outside every folder, not one in its person's folder) or nothing. */
export function scopePhrase(e) {
  if (opIn('path', e.op) && String(e.target || '').startsWith('/')) return ` ${words.outside}`;
  if (e.user) return ` in ${folderName(e.user)}`;
  return opIn('corral', e.op) ? ' for all folders' : '';
}

// [headline, explanation, short word for the table] per decided_by.
const decidedByText = {
  scope: ['Inside its own folder', 'The target is inside the agent’s own folder or the shared folder, which agents may always use.', 'own folder'],
  root: ['Inside a folder you opened to agents', 'The target is in one of the extra folders listed in Corral’s config.', 'open folder'],
  rule: ['A rule you made', 'A remembered answer (see Rules) decided without asking.', 'by a rule'],
  owner: ['You answered', 'Corral asked and someone with the owner’s rights answered.', 'by you'],
  timeout: ['Nobody answered in time', 'Corral asked, nobody answered before the time ran out, so it was denied.', 'timed out'],
  strict: ['Nobody was there to ask', 'With no tray, dashboard or phone open to ask, the request was denied at once (Corral is set to refuse when nobody can be asked).', 'nobody asked'],
  paused: ['Agents were paused', words.paused_banner, 'paused'],
  level: ['The agent’s trust level', 'The agent is Read-only: Corral refused its write or command without asking. Change its trust level on the Agents page.', 'trust level'],
};

// Corral's fixed rules for files refuse more than escapes: what the event's
// error says picks the explanation (and the table's short word). The
// sentences are matched loosely; anything not recognised gets a general
// explanation that is true for every such refusal.
const fileRuleReasons = [
  [/^forbidden:|may not act for/i, 'Not its folder', 'another folder',
    'The agent named another agent’s folder it may not act in (act_for in the config), which is always refused without asking.'],
  [/is in your own folders; name it/i, 'Named by its host path', 'host path',
    'The agent named a file of its own folders by its full path on this computer. Corral refuses that spelling and tells the agent the path to use instead.'],
  [/belongs to Corral, to another user|agents can never use it/i, 'Off limits', 'off limits',
    'The path is Corral’s own files, another user’s folder or a system folder: agents can never use those, and you are never asked about them.'],
  [/hard link|more than one name/i, 'A hard-linked file', 'hard link',
    'The file has more than one name (a hard link). Corral never opens such a file, even inside the agent’s own folder, because a hard link can bring in a file from somewhere agents may not go.'],
  [/pipe, socket or device|not a regular file/i, 'Not a regular file', 'special file',
    'The path is a pipe (FIFO), socket or device rather than a regular file or folder. Corral never opens those, even inside the agent’s own folder.'],
  [/too many links|link loop/i, 'Too many links', 'link loop',
    'The path goes through a loop of symbolic links or too long a chain of them, so Corral stopped following it.'],
  [/leads outside|outside your folder|only point into your own folder|must be inside the home folder/i, 'Outside its own folder', 'outside its folder',
    'The path tried to leave the agent’s own folder (or named another agent’s folder), which is always refused without asking.'],
  [/symbolic link/i, 'A symbolic link', 'symbolic link',
    'Links made by Corral never point at or through a symbolic link.'],
  [/read-only/i, 'Read-only disk', 'read-only',
    'The file is on a disk that cannot be written.'],
  [/does not allow Corral/i, 'Not allowed by the computer', 'file permissions',
    'The computer’s own file permissions do not let Corral do that.'],
  [/top of its area/i, 'A top folder', 'top folder',
    'Corral never deletes or moves the top of an agent’s folder, the shared folder or an opened folder.'],
];

// decidedBy explains a decision: [headline, explanation, short word for the table].
export function decidedBy(e) {
  const net = netDecidedBy(e); // a connection: by what decided it (netlabels.js)
  if (net) return net;
  if (e.decision === 'deny' && (e.decided_by === 'scope' || e.decided_by === 'root')) {
    const text = e.error || '';
    for (const [re, head, short, why] of fileRuleReasons) if (re.test(text)) return [head, why, short];
    return ['Corral’s rules for files', 'Corral refused it without asking, by its fixed rules for files and folders; the error says why.', 'file rules'];
  }
  if (e.decided_by === 'owner' && !/owner answered/.test(e.detail || '')) {
    if (ownerActs[e.op]) return ownerActs[e.op];
    if (opIn('owner', e.op)) return ['Done with the owner’s rights', 'You did this yourself, from the tray, the dashboard, the command line or a paired device.', 'by you'];
  }
  return decidedByText[e.decided_by] || [e.decided_by, '', e.decided_by];
}

// accessVerbs complete "<agent> wants to …" (network reads "wants network
// access for …", as the server says it); accessLabels name an access on
// its own, as on a chip.
const accessVerbs = {
  read: 'read', write: 'change', delete: 'delete', execute: 'run',
};
export const accessLabels = words.access;

/** wantsSentence is the plain line of an approval when the server gave none. */
export function wantsSentence(client, access, target) {
  if (access === 'network') return `${client} wants network access for ${target}`;
  return `${client} wants to ${accessVerbs[access] || access} ${target}`;
}

/** folderName names the folder an agent acts in ("scope" on the wire): "alice’s folder", as policy.FolderName. */
export function folderName(scope) {
  if (!scope || scope === 'default') return 'the default folder';
  if (scope === 'companion') return 'the companion folder';
  return `${scope}’s folder`;
}

export function scopeName(scope) {
  if (scope === 'default') return 'Default';
  if (scope === 'companion') return 'Companion';
  return scope || '—';
}

// ---------- toasts ----------

/** toast shows a short message for a few seconds. */
export function toast(message, { kind = 'info', action, timeout = 5000 } = {}) {
  const box = document.getElementById('toasts');
  if (!box) return;
  const el = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, h('span', null, message));
  if (action) el.append(action);
  box.append(el);
  setTimeout(() => el.remove(), timeout);
  while (box.children.length > 4) box.firstElementChild.remove();
}

/** follow clicks a throwaway link made from attrs: to open a new tab or start a download. */
export function follow(attrs) {
  const a = h('a', attrs);
  document.body.append(a);
  a.click();
  a.remove();
}

/** safeURL accepts only http(s) URLs, so nothing the server relays can become javascript:. */
export function safeURL(u) {
  try {
    const x = new URL(u, location.href);
    return x.protocol === 'http:' || x.protocol === 'https:' ? x.href : null;
  } catch {
    return null;
  }
}

/** confirmButton makes a destructive button ask for a second click. */
export function confirmButton(btn, label, action) {
  const plain = btn.textContent;
  let timer = 0;
  btn.addEventListener('click', async () => {
    if (!btn.classList.contains('confirming')) {
      btn.classList.add('confirming');
      btn.textContent = label;
      timer = setTimeout(() => { btn.classList.remove('confirming'); btn.textContent = plain; }, 4000);
      return;
    }
    clearTimeout(timer);
    btn.disabled = true;
    try {
      await action();
    } finally {
      btn.disabled = false;
      btn.classList.remove('confirming');
      btn.textContent = plain;
    }
  });
}
