// Shared links: the links agents and the owner handed out (links.list),
// each with its target, who made it, its expiry and a Revoke button
// (link.revoke) that withdraws that one link, not every link. The list
// follows the live audit stream: a link made, saved or withdrawn anywhere
// shows here at once.
import { h, $, visible } from '../../lib/dom/h.js';
import { ago, full } from '../../lib/dom/format.js';
import { toast, confirmButton, safeURL } from '../../lib/dom/ui.js';
import { folderName, opIn } from '../../lib/dom/names.js';
import { copyLink } from '../../lib/links.js';
import { View } from '../../lib/view.js';

export class SharedLinks extends View {
  constructor(app) {
    super(app);
    this.list = $('#shared-list');
    this.empty = $('#shared-empty');
    this.all = $('#shared-all');
    this.more = $('#shared-more');
    this.cursor = '';
    this.gen = 0;
    this.kept = new Map(); // id → link withdrawn here: stays in view, marked, until the view is left
    this.all.addEventListener('change', () => this.load());
    this.more.addEventListener('click', () => this.load(this.cursor));
    this.rpc.on('audit.event', ({ event }) => {
      if (this.visible && opIn('links', event?.op)) this.load();
    });
  }

  enter() { this.reload(); }

  leave() {
    this.kept.clear();
  }

  /** load shows the first page, or appends the page after cursor. */
  async load(cursor = '') {
    const gen = ++this.gen;
    try {
      const r = await this.rpc.call('links.list', { all: this.all.checked, cursor: cursor || undefined });
      if (gen !== this.gen) return;
      let links = r.links;
      if (!cursor && !this.all.checked && this.kept.size) {
        const listed = new Set(links.map((l) => l.id));
        links = [...links, ...[...this.kept.values()].filter((l) => !listed.has(l.id))]
          .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
      }
      const rows = links.map((l) => this.render(l));
      if (cursor) this.list.append(...rows);
      else this.list.replaceChildren(...rows);
      this.cursor = r.next_cursor || '';
      this.more.hidden = !this.cursor;
      this.empty.hidden = this.list.children.length > 0;
      $('#shared-empty-all').hidden = this.all.checked;
      document.body.dataset.sharedReady = String(this.gen);
    } catch (e) {
      if (gen !== this.gen) return;
      if (e.kind === 'io' && !cursor) return; // reconnecting: loads again on open
      toast(e.message, { kind: 'error' });
    }
  }

  render(l) {
    const target = `${visible(l.path)}${l.folder && l.path !== '.' ? '/' : ''}`;
    const state = {
      active: `expires ${ago(l.expires_at)}`,
      expired: `expired ${ago(l.expires_at)}`,
      revoked: `withdrawn ${ago(l.revoked_at)}`,
      rotated: 'stopped when all links were renewed',
    }[l.state] || l.state;
    const gone = l.state === 'active' ? '' : ' gone';
    const el = h('li', { class: `device shared-link ${l.state}${gone}`, dataset: { id: l.id, state: l.state } },
      h('div', { class: 'main' },
        h('span', { class: 'name' }, l.path === '.' ? `All of ${folderName(l.scope)}` : target),
        h('p', { class: 'meta' },
          h('span', { class: 'm' }, folderName(l.scope)),
          h('span', { class: 'm' }, `made by ${visible(l.made_by)}`),
          h('span', { class: 'm', title: full(l.created_at) }, ago(l.created_at)),
          h('span', { class: 'm state', title: full(l.state === 'revoked' ? l.revoked_at : l.expires_at) }, state))));
    if (l.state !== 'active') return el;
    const actions = h('div', { class: 'actions' });
    const url = safeURL(l.lan_url || l.url || '');
    if (url) {
      const copy = h('button', { type: 'button', class: 'btn', 'aria-label': `Copy the link to ${target}` }, 'Copy');
      copy.addEventListener('click', () => copyLink(url));
      actions.append(copy, qrButton(url, target, el));
    }
    const revoke = h('button', { type: 'button', class: 'btn danger', 'aria-label': `Revoke the link to ${target}` }, 'Revoke');
    confirmButton(revoke, 'Click again to revoke', async () => {
      try {
        const r = await this.rpc.call('link.revoke', { id: l.id });
        this.kept.set(r.id, r);
        el.replaceWith(this.render(r));
        toast('That link no longer opens. Other links keep working.');
      } catch (e) {
        toast(e.message, { kind: 'error' });
        this.load();
      }
    });
    actions.append(revoke);
    el.append(actions);
    return el;
  }
}

/** qrButton shows or hides, under the row el, the QR code of url drawn by
 * Corral (GET /qr.svg), for a phone's camera. */
export function qrButton(url, target, el) {
  const btn = h('button', { type: 'button', class: 'btn', 'aria-expanded': 'false', 'aria-label': `QR code of the link to ${target}` }, 'QR code');
  btn.addEventListener('click', () => {
    const shown = el.querySelector('.link-qr');
    if (shown) {
      shown.remove();
      btn.setAttribute('aria-expanded', 'false');
      return;
    }
    el.append(h('div', { class: 'link-qr' },
      h('img', { src: `/qr.svg?text=${encodeURIComponent(url)}`, alt: `QR code of the link to ${target}`, width: 240, height: 240 })));
    btn.setAttribute('aria-expanded', 'true');
  });
  return btn;
}
