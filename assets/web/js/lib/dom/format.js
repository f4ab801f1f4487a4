// Times, counts and sizes in the owner's words and locale.

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
