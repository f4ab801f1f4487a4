// Network events say what they are. A connection's event (network.connect)
// starts its detail with what decided it, in words core/netgate writes
// (its Cause constants: they do not change), then names the command it
// belongs to: "the owner's answer; for command 7 (event 41); to …". This
// file turns those words into the row's and the detail's labels, and the
// command into a link to its event. No imports: dom/names.js uses it.

// [headline, explanation, short word for the table] per cause; null
// leaves the label to decided_by (an answer nobody gave: timed out,
// paused, nobody there).
const causes = {
  'the command’s list': () => ['Not in the command’s list',
    'The command did not name this domain in its allowed_domains or package_managers, so Corral refused it at once, without asking. The agent was told which domain to ask for next time.',
    'not in its list'],
  'refused address': () => ['A refused address',
    'The name or address leads to this computer, the home network or a reserved range, which commands may never reach. Corral refused it without asking, whatever was allowed.',
    'refused address'],
  'name lookup failed': () => ['The name lookup failed',
    'Corral could not find an address for this name, so nothing was connected. Nothing was refused: the name does not exist, or the network is down.',
    'lookup failed'],
  'the command’s limits': () => ['The command’s limits',
    'The command had too many connections open at once, or named a host or port that is not valid.',
    'limits'],
  'network rule': () => ['A network rule you made',
    'A remembered answer for this domain (see Rules) decided without asking.',
    'network rule'],
  'the owner’s answer': (e) => (e.decided_by === 'owner'
    ? ['Your answer before the command started',
      'You were asked once, before the command started, about every domain it declared; your answer holds for that run only.',
      'your answer']
    : e.decided_by === 'rule' ? causes['network rule']() : null),
  'network for this run': () => ['You allowed this run the network',
    'Before the command started you allowed it any public domain (network: true), for that run only.',
    'your answer'],
  'could not connect': () => ['Allowed, but it could not connect',
    'The connection was allowed, but the host did not answer or refused it; the error says why.',
    'no answer'],
};

/** netDecidedBy labels a connection's event by what decided it, or returns null. */
export function netDecidedBy(e) {
  if (e.op !== 'network.connect') return null;
  const cause = (e.detail || '').split(';')[0].replace(/'/g, '’');
  const f = causes[cause];
  return f ? f(e) : null;
}

const COMMAND = /for command (\S+) \(event (\d+)\)/;

/**
 * commandLink finds "for command N (event M)" in a network event's
 * detail: {before, label, id, after}, label "for command N" and id M, the
 * command's event; null when there is none.
 */
export function commandLink(detail) {
  const m = COMMAND.exec(detail || '');
  if (!m) return null;
  return {
    before: detail.slice(0, m.index), label: `for command ${m[1]}`, id: Number(m[2]), after: detail.slice(m.index + m[0].length),
  };
}
