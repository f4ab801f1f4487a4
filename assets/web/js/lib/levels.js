// Trust levels (policy.Levels): their names and words come from
// session.info (levels), each agent's from agent.list; every place that
// shows an agent's name asks levelTag for the level beside it.
import { h } from './dom/h.js';

let levels = [];
const agentLevel = new Map(); // agent name → { level, label }

/** setLevels keeps the named levels session.info gives the owner. */
export function setLevels(info) { if (info?.levels) levels = info.levels; }

/** allLevels are the named levels, in the order surfaces show them. */
export const allLevels = () => levels;

/** levelInfo is the named level's row, or undefined (custom). */
export const levelInfo = (level) => levels.find((l) => l.level === level);

/** setAgentLevels records each agent's level from agent.list. */
export function setAgentLevels(agents) {
  agentLevel.clear();
  for (const a of agents || []) agentLevel.set(a.name, { level: a.level, label: a.level_label });
}

/**
 * levelData is the dataset that shows an agent's level beside its name
 * in a table cell (drawn by CSS, so the cell's text stays the name).
 */
export function levelData(name) {
  const l = agentLevel.get(name);
  return l ? { level: l.level, levelLabel: l.label } : {};
}

/**
 * levelTag is a small tag naming the agent's trust level, or null. An
 * approval carries the level its agent had when it asked (level,
 * level_label): given as own, it wins, so a paired phone, which cannot
 * list agents, shows it too.
 */
export function levelTag(name, own) {
  const l = own?.level ? { level: own.level, label: own.level_label || own.level } : agentLevel.get(name);
  if (!l) return null;
  return h('span', { class: `level-tag level-${l.level}`, title: levelInfo(l.level)?.explain || 'Settings of its own', dataset: { level: l.level } }, l.label);
}
