// Package directory is the live table of the agents and people Corral
// knows (docs/owner.md "Agents and people"): those written in
// config.toml, read-only here, and those the owner adds from the
// dashboard, kept in the store (Store, which store.Store implements).
// Every bearer key is looked up in it (ByKey), and every call of an
// agent reads the agent's settings as they are now (Current), so a
// change takes effect on the agent's next call.
//
// It guarantees:
//   - a change is written to the store first and to the live table
//     after, under the table's lock: a refused or failed change leaves
//     both as they were, and no two changes interleave;
//   - a key is compared in constant time against every agent's hash,
//     and only its SHA-256 is kept; a new key is shown once;
//   - an agent removed, re-keyed or taken out of config.toml loses its
//     connections (Options.HangUp) and its running commands, and one
//     removed or taken out also its waiting questions, withdrawn as a
//     removal (Runs.WithdrawRemoved); one paused or made Read-only has its
//     running commands stopped and its waiting questions withdrawn (Runs);
//   - a person's folder is made when they are added and kept, with what
//     is in it, when they go;
//   - every change is recorded in the audit log (Options.Record) before
//     its answer, and its answer is withheld when that fails.
//
// It does not decode JSON-RPC, check that the caller is the owner, or
// shape the methods' results: app/server's method table does that and
// calls the typed functions here (AddAgent, RemovePerson, …). Paired
// devices are not here (app/pairing); neither are browser
// sessions.
package directory
