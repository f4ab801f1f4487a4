// Corral's vocabulary on screen: who did something, the operations and
// decisions by the server's labels, why something was decided, and the
// names of folders.

import { netDecidedBy } from '../netlabels.js';
import { words } from '../words.js';

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
