// Package answers is the owner's side of the approval broker
// (core/policy) on the wire: the questions waiting and the owner's
// answers to them (approval.list, approval.respond, approval.subscribe
// through Notifier), the standing rules (rule.list, rule.revoke, and
// those written by hand: rule.preview, rule.add, rule.update,
// rule.export, rule.import) and the global pause (agents.pause,
// agents.resume). Each method is a typed function over a narrow
// interface of the policy (Queue, Book) and of the directory
// (Directory); app/server registers them in its method table, decoding
// their params and allowing them to the owner alone.
//
// It guarantees:
//   - with approvals off (no policy), every method answers unavailable
//     and changes nothing;
//   - a question reaches every surface with the answers it accepts and
//     the one to put first, from policy's one table (WithChoices), so no
//     surface keeps its own copy;
//   - a rule written by hand names an agent and a folder that exist now
//     (Directory) and meets the checks an answer widened to its folder
//     meets (policy.Prepare); an import refuses the whole file for one
//     bad entry;
//   - rule.export and rule.import are recorded in the audit log before
//     their answer, and their answer is withheld when that fails (the
//     policy records the answers, rule changes and pauses itself).
//
// It does not decode JSON-RPC, check that the caller is the owner, say
// which surface answered (the server names it: via), or keep the
// connection a subscription streams to.
package answers
