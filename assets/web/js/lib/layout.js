// Layout on small screens (issue 27 item 5): on a phone the Activity
// page opens on its events — the filters and the chart are folded away
// until asked for, also when a window is narrowed to phone width — and the
// bottom tab bar, which scrolls sideways when its tabs do not fit, keeps
// the current tab in view. Nothing here decides what is shown, only where.
import { $, $$, h } from './dom/h.js';

const phone = matchMedia('(max-width: 640px)');

/** fold closes the filters and the chart on a phone. */
function fold() {
  if (!phone.matches) return;
  const filters = $('#filters-wrap');
  if (filters) filters.open = false;
  const chart = $('.chart-card');
  if (chart) chart.classList.remove('unfolded');
}

/** chartToggle adds the phone's "Show chart" button to the chart's head. */
function chartToggle() {
  const card = $('.chart-card');
  const head = card?.querySelector('.chart-head');
  if (!head || head.querySelector('.chart-toggle')) return;
  const b = h('button', { type: 'button', class: 'btn small chart-toggle', 'aria-expanded': 'false' }, 'Show chart');
  b.addEventListener('click', () => {
    const open = card.classList.toggle('unfolded');
    b.setAttribute('aria-expanded', String(open));
    b.textContent = open ? 'Hide chart' : 'Show chart';
  });
  head.append(b);
}

/** currentTabInView scrolls the bottom tab bar to the current tab. */
function currentTabInView() {
  if (!phone.matches) return;
  const t = $$('a.tab').find((a) => a.getAttribute('aria-current') === 'page');
  t?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

chartToggle();
fold();
phone.addEventListener('change', () => { fold(); currentTabInView(); });
addEventListener('hashchange', () => requestAnimationFrame(currentTabInView));
requestAnimationFrame(currentTabInView);

/**
 * keepClearOfBars makes the page's scroll padding equal to the sticky
 * header's height (and, on a phone, the fixed tab bar's at the bottom),
 * so an anchor or scrollIntoView lands below the header instead of under
 * it: at 1181–1599 px the header takes two rows. A ResizeObserver keeps
 * it equal as the header wraps or unwraps.
 */
function keepClearOfBars() {
  const bar = $('.topbar');
  const tabs = $('.tabs');
  if (!bar) return;
  const root = document.documentElement.style;
  const fit = () => {
    const pinned = (el) => el && ['sticky', 'fixed'].includes(getComputedStyle(el).position);
    root.scrollPaddingTop = pinned(bar) ? `${Math.ceil(bar.getBoundingClientRect().height)}px` : '';
    const tabsFixed = tabs && getComputedStyle(tabs).position === 'fixed';
    root.scrollPaddingBottom = tabsFixed ? `${Math.ceil(tabs.getBoundingClientRect().height)}px` : '';
  };
  fit();
  if (typeof ResizeObserver === 'function') {
    const ro = new ResizeObserver(fit);
    ro.observe(bar);
    if (tabs) ro.observe(tabs);
  }
  phone.addEventListener('change', fit);
}

keepClearOfBars();
