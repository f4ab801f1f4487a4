// Browsing what agents can see: each scope's folder (the owner acts for any
// scope through `context`) and the shared folder. Output folders come
// first; files open through a fresh signed link, or get a link to copy.
import { h, $, $$, icons, visible } from '../../lib/dom/h.js';
import { size, ago, full } from '../../lib/dom/format.js';
import { scopeName } from '../../lib/dom/names.js';
import { openFile, shareDialog, scopeContext } from '../../lib/links.js';
import { View } from '../../lib/view.js';

export class Files extends View {
  constructor(app) {
    super(app);
    this.places = $('#places');
    this.listing = $('#listing');
    this.crumbs = $('#crumbs');
    this.empty = $('#listing-empty');
    this.sort = 'name';
    this.cur = null;
    this.gen = 0;
    for (const b of $$('[data-sort]')) {
      b.addEventListener('click', () => {
        this.sort = b.dataset.sort;
        for (const x of $$('[data-sort]')) x.setAttribute('aria-pressed', String(x === b));
        if (this.entries) this.render(this.entries);
      });
    }
  }

  get shared() { return this.app.info?.shared_dir || 'share'; }
  get output() { return this.app.info?.output_dir || 'output'; }

  placeList() {
    const scopes = this.app.info?.scopes || ['default'];
    const out = [{ id: 'share', scope: 'default', root: this.shared, label: 'Shared folder', icon: icons.share }];
    for (const sc of scopes) {
      out.push({
        id: sc, scope: sc, root: '', label: scopeName(sc),
        icon: sc === 'companion' ? icons.phone : sc === 'default' ? icons.home : icons.user,
      });
    }
    return out;
  }

  /** reconnected reloads the folder shown, once there is one. */
  reconnected() { if (this.cur) super.reconnected(); }

  enter(params) {
    if (!this.app.info) { // the scopes come with session.info: show once it answers
      this.waiting = params;
      return;
    }
    this.waiting = null;
    const places = this.placeList();
    const want = params.get('place') || params.get('scope') || places[1]?.id || 'share';
    const place = places.find((p) => p.id === want) || places[0];
    let path = params.get('path') || place.root;
    if (place.id !== 'share' && (path === this.shared || path.startsWith(`${this.shared}/`))) {
      // A shared path reached from a scope lives under the shared place.
      this.show(new URLSearchParams({ place: 'share', path }));
      return;
    }
    this.places.replaceChildren(...places.map((p) => h('li', null,
      h('a', { href: `#files?${new URLSearchParams({ place: p.id })}`, 'aria-current': p.id === place.id ? 'true' : null }, p.icon(), p.label))));
    this.cur = { place, path };
    this.reload();
  }

  href(place, path) {
    const p = new URLSearchParams({ place: place.id });
    if (path && path !== place.root) p.set('path', path);
    return `#files?${p}`;
  }

  async load() {
    const { place, path } = this.cur;
    const gen = ++this.gen;
    this.renderCrumbs(place, path);
    this.listing.setAttribute('aria-busy', 'true');
    try {
      const params = { context: scopeContext(place.scope) };
      if (path) params.path = path;
      const r = await this.rpc.call('folder.list', params);
      if (gen !== this.gen) return;
      this.entries = r.entries;
      this.render(r.entries, r.truncated);
    } catch (e) {
      if (gen !== this.gen) return;
      this.entries = [];
      this.listing.replaceChildren();
      this.empty.hidden = false;
      $('#listing-empty-text').textContent = e.kind === 'not_found'
        ? (path === place.root ? 'Nothing here yet. This folder appears when an agent first writes to it.' : 'This folder is no longer there.')
        : visible(e.message);
    } finally {
      if (gen === this.gen) this.listing.removeAttribute('aria-busy');
    }
  }

  renderCrumbs(place, path) {
    const items = [{ label: place.label, path: place.root }];
    const rel = place.root ? path.slice(place.root.length).replace(/^\//, '') : path;
    let acc = place.root;
    for (const part of rel.split('/').filter(Boolean)) {
      acc = acc ? `${acc}/${part}` : part;
      items.push({ label: part, path: acc });
    }
    this.crumbs.replaceChildren(...items.map((it, i) => h('li', null, i === items.length - 1
      ? h('span', { 'aria-current': 'page' }, it.label)
      : h('a', { href: this.href(place, it.path) }, it.label))));
  }

  render(entries, truncated) {
    const { place, path } = this.cur;
    const atScopeRoot = place.id !== 'share' && path === '';
    const rank = (e) => (atScopeRoot && e.type === 'dir' && e.name === this.output ? 0 : e.type === 'dir' ? 1 : 2);
    const list = [...entries].filter((e) => !(atScopeRoot && e.name === this.shared && e.type === 'symlink'));
    list.sort((a, b) => rank(a) - rank(b)
      || (this.sort === 'newest' ? new Date(b.modified) - new Date(a.modified) : a.name.localeCompare(b.name)));
    this.listing.replaceChildren(...list.map((e) => this.entry(place, e, atScopeRoot && e.type === 'dir' && e.name === this.output)));
    if (truncated) this.listing.append(h('li', { class: 'entry' }, h('span', { class: 'muted small' }, 'This folder has more entries than Corral lists at once.')));
    this.empty.hidden = list.length > 0;
    if (!list.length) $('#listing-empty-text').textContent = 'This folder is empty.';
  }

  entry(place, e, isOutput) {
    const dir = e.type === 'dir';
    const sub = dir ? `Folder · changed ${ago(e.modified)}` : `${size(e.size)} · ${ago(e.modified)}`;
    let name;
    if (dir) {
      name = h('a', { href: this.href(place, e.path) }, e.name);
    } else if (e.type === 'file') {
      name = h('a', { href: '#', role: 'button', title: `Open ${e.name}` }, e.name);
      name.addEventListener('click', (ev) => { ev.preventDefault(); openFile(this.rpc, place.scope, e.path); });
    } else {
      name = h('span', { class: 'n' }, e.name);
    }
    const acts = [];
    if (e.type === 'file') {
      acts.push(h('button', { type: 'button', class: 'btn small', 'aria-label': `Open ${e.name}`, onclick: () => openFile(this.rpc, place.scope, e.path) },
        icons.open(), h('span', { class: 'lbl' }, 'Open')));
    }
    if (dir || e.type === 'file') {
      acts.push(h('button', { type: 'button', class: 'btn small', 'aria-label': `Make a link to ${e.name}`, onclick: () => shareDialog(this.rpc, place.scope, e.path, e.type) },
        icons.link(), h('span', { class: 'lbl' }, 'Link')));
    }
    return h('li', { class: `entry ${dir ? 'dir' : 'file'}${isOutput ? ' output' : ''}`, dataset: { path: e.path } },
      h('span', { class: 'icon' }, isOutput ? icons.star() : dir ? icons.folder() : icons.file()),
      h('span', { class: 'name' },
        h('span', { class: 'row' }, name, isOutput ? h('span', { class: 'tag' }, 'Made by agents') : null),
        h('span', { class: 'sub', title: full(e.modified) }, sub)),
      h('span', { class: 'acts' }, acts));
  }
}
