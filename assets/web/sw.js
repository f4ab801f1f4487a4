// Corral's service worker. It shows nothing by itself and caches nothing:
// the page (notify.js) asks it to show a system notification when a new
// approval arrives, and a tap on one brings Corral's window to the front
// on Approvals. Without a push service it cannot wake a sleeping phone:
// notifications come only while the page or the installed app is alive.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('notificationclick', (e) => {
  e.notification.close();
  e.waitUntil((async () => {
    const wins = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const w of wins) {
      w.postMessage({ open: 'approvals' });
      if ('focus' in w) return w.focus();
    }
    return self.clients.openWindow('/#approvals');
  })());
});
