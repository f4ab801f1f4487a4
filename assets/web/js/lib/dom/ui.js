// Small pieces of page behaviour: toasts, a throwaway link to follow, a
// URL check, and a button that asks for a second click.

import { h } from './h.js';

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
