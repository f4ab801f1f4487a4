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
