// View is what every view of the dashboard offers the router (app.js) and
// the connection, written once here:
//
//   show(params)  the router shows the view with the hash's query; the view
//                 is visible until hide(). Each view says what showing does
//                 in enter(params); by default it loads if its data is stale.
//   hide()        another view is shown; leave() is the view's own part.
//                 Unless the view keeps its data right while hidden (keep),
//                 what it shows is stale from then on: nobody follows it.
//   reconnected() the WebSocket opened again (the rpc's "open" event): what
//                 was on screen may have changed meanwhile, so changed().
//   changed()     the view's data is out of date: it is reloaded at once if
//                 the view is visible, else marked stale for its next show.
//   reload()      load now and clear the stale mark; load() is the view's
//                 own read (it may set this.stale again when it fails).
//
// A view that must follow the connection while hidden too (the approvals
// and the badge, the agents and the first-run banner) overrides
// reconnected().
export class View {
  /**
   * @param app the dashboard (app.js): its rpc, session info and view.
   * @param keep the view hears of every change while hidden (changed()),
   *   so hiding it does not make its data stale.
   */
  constructor(app, { keep = false } = {}) {
    this.app = app;
    this.rpc = app.rpc;
    this.visible = false;
    this.stale = true; // loaded never, or out of date since
    this.keep = keep;
    this.rpc.addEventListener('open', () => this.reconnected());
  }

  /** show is called by the router with the hash's query. */
  show(params) {
    this.visible = true;
    this.enter(params);
  }

  /** hide is called by the router when another view is shown. */
  hide() {
    this.visible = false;
    if (!this.keep) this.stale = true;
    this.leave();
  }

  /** enter is the view's part of show: by default it loads stale data. */
  enter(params) { // eslint-disable-line no-unused-vars
    if (this.stale) this.reload();
  }

  /** leave is the view's part of hide. */
  leave() {}

  /** reconnected is called each time the WebSocket opens. */
  reconnected() { this.changed(); }

  /** changed marks the data out of date and reloads it if it is on screen. */
  changed() {
    this.stale = true;
    if (this.visible) this.reload();
  }

  /** reload loads the view's data now. */
  reload() {
    this.stale = false;
    return this.load();
  }

  /** load reads the view's data and shows it; each view writes its own. */
  async load() {}
}
