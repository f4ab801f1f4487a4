// Building and finding elements: h() and s() make HTML and SVG elements,
// $ and $$ find them, icons draws the small pictures. Every string from the server goes into
// the page as text (textContent or an attribute value), never as markup;
// the page's Trusted Types policy would refuse markup from strings anyway.
// Text that h() and s() put on screen (children, text, title, aria-label)
// passes through visible(): an agent's control characters and bidi
// overrides are shown as escapes, never as themselves.

// Control (Cc), format (Cf: bidi embeddings, overrides and isolates,
// zero-width characters) and lone surrogate (Cs) code points, and the
// line and paragraph separators. The server's core/visible makes the same
// characters visible for its own surfaces.
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
