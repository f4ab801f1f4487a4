// Opening and sharing files through fresh signed links (PROTOCOL.md
// section 8). The dashboard never serves file bytes itself: it asks for a
// short link and lets the browser open /files/out, whose pages are
// sandboxed and cannot act as the dashboard.
import { h, $ } from './dom/h.js';
import { toast, safeURL, follow } from './dom/ui.js';
import { full, ago } from './dom/format.js';

/** scopeContext is the context that makes the owner act in a scope. */
export const scopeContext = (scope) => ({ user_id: scope });

/** makeLink asks for a signed link to path in scope; it resolves with the checked URL and its expiry. */
async function makeLink(rpc, scope, path, expiresIn) {
  const r = await rpc.call('link.create', { path, expires_in: expiresIn, context: scopeContext(scope) });
  const url = safeURL(r.url);
  if (!url) throw new Error('Corral answered a link this page will not open.');
  return { url, expiresAt: r.expiresAt, localOnly: r.local_only === true, lanURL: r.lan_url ? safeURL(r.lan_url) : null };
}

/** reachNote says where a new link opens: only here, or also on the home network (none, or one element). */
function reachNote(localOnly, lanURL) {
  if (lanURL) {
    const input = h('input', { type: 'text', readonly: true, value: lanURL, 'aria-label': 'Link on your home network', id: 'share-lan-url' });
    return [h('div', { class: 'share-lan' },
      h('p', { class: 'small' }, 'On your home network (phones, other computers) use this address. It uses Corral’s own certificate, so the browser asks once whether to trust it.'),
      h('div', { class: 'linkbox' }, input, h('button', { type: 'button', class: 'btn', onclick: () => copyLink(lanURL, input) }, 'Copy')),
      h('div', { class: 'link-qr' }, h('img', { src: `/qr.svg?text=${encodeURIComponent(lanURL)}`, alt: 'QR code of the link on your home network', width: 200, height: 200 })))];
  }
  if (localOnly) {
    return [h('p', { class: 'small share-local', role: 'note' },
      'This link works only on this computer. To open it on a phone or another computer, turn on the LAN under Settings (no restart needed) or set a public address.')];
  }
  return [];
}

/** openFile asks for a fresh link and opens it in a new tab. */
export async function openFile(rpc, scope, path) {
  try {
    const { url } = await makeLink(rpc, scope, path, '1h');
    follow({ href: url, target: '_blank', rel: 'noopener noreferrer' });
  } catch (e) {
    toast(e.message, { kind: 'error' });
  }
}

/** copyLink puts url on the clipboard (or selects input and copies that) and says how it went. */
export async function copyLink(url, input) {
  toast(await copyText(url, input) ? 'Link copied.' : 'Select the link and copy it.');
}

async function copyText(text, input) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* fall back below */ }
  if (input) {
    input.focus();
    input.select();
    try { return document.execCommand('copy'); } catch { return false; }
  }
  return false;
}

/** shareDialog lets the owner make a link to copy, with an expiry. */
export function shareDialog(rpc, scope, path, kind = 'file') {
  const dlg = $('#share');
  const body = $('#share-body');
  $('#share-title').textContent = kind === 'dir' ? 'Share this folder' : 'Share this file';
  const expiry = h('select', { id: 'share-expiry' },
    h('option', { value: '1h' }, '1 hour'),
    h('option', { value: '24h', selected: true }, '1 day'),
    h('option', { value: '7d' }, '7 days'),
    h('option', { value: '30d' }, '30 days'));
  const result = h('div', { class: 'share-result', 'aria-live': 'polite' });
  const make = h('button', { type: 'button', class: 'btn primary' }, 'Create link');
  make.addEventListener('click', async () => {
    make.disabled = true;
    result.replaceChildren(h('p', { class: 'muted' }, 'Making a link…'));
    try {
      const { url, expiresAt, localOnly, lanURL } = await makeLink(rpc, scope, path, expiry.value);
      const input = h('input', { type: 'text', readonly: true, value: url, 'aria-label': 'Link', id: 'share-url' });
      const copy = h('button', { type: 'button', class: 'btn', onclick: () => copyLink(url, input) }, 'Copy');
      result.replaceChildren(
        h('div', { class: 'linkbox' }, input, copy),
        h('p', { class: 'muted small' }, `Anyone with this link can open it until ${full(expiresAt)} (${ago(expiresAt)}). `,
          h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, 'Open it')),
        ...reachNote(localOnly, lanURL),
      );
      input.select();
    } catch (e) {
      result.replaceChildren(h('p', { class: 'muted' }, e.message));
    } finally {
      make.disabled = false;
    }
  });
  body.replaceChildren(
    h('p', null, h('code', null, path)),
    h('div', { class: 'field' }, h('label', { for: 'share-expiry' }, 'Link works for'), expiry),
    h('div', { class: 'detail-actions' }, make),
    result,
  );
  if (!dlg.open) dlg.showModal();
}
