// The one-time login page: keep the session's second secret in this
// tab's sessionStorage (no other origin can read it; the cookie alone
// opens nothing that acts), then open the dashboard.
const meta = document.querySelector('meta[name="corral-secret"]');
if (meta) sessionStorage.setItem('corral.secret', meta.content);
location.replace('/' + location.hash);
