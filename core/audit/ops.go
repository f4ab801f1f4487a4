package audit

// Operation is one kind of action the log records (Event.Op), with the
// words the owner's surfaces show for it and the groups they treat alike.
// Operations is the one table of them: every operation Corral can record
// is in it (ops_test.go reads the sources to hold that), and the dashboard
// takes its labels and groups from session.info rather than keeping its
// own copy.
type Operation struct {
	Name   string
	Label  string
	Groups []string
}

// The groups of operations.
const (
	// GroupLooks only read or look: the audit log's "All reading and looking".
	GroupLooks = "looks"
	// GroupPath operations have a path in the event's scope as their target.
	GroupPath = "path"
	// GroupCorral act on Corral as a whole, not in one folder.
	GroupCorral = "corral"
	// GroupOwner are done only by the owner (answers aside): recorded as
	// decided by the owner because the owner did them.
	GroupOwner = "owner"
	// GroupCommand run a command; a finished one's detail says "exit N".
	GroupCommand = "command"
	// GroupLinks make or withdraw shared links: the Shared links list
	// follows them.
	GroupLinks = "links"
)

// Operations lists every operation, in the order the owner is offered them.
var Operations = []Operation{
	{"file.read", "Read a file", []string{GroupLooks, GroupPath}},
	{"file.document_read", "Read a document", []string{GroupLooks, GroupPath}},
	{"file.write", "Wrote a file", []string{GroupPath}},
	{"file.edit", "Edited a file", []string{GroupPath}},
	{"file.apply_patch", "Patched files", nil},
	{"file.delete", "Deleted", nil},
	{"file.move", "Moved", []string{GroupPath}},
	{"folder.create", "Made a folder", nil},
	{"file.stat", "Looked at a file", []string{GroupLooks, GroupPath}},
	{"folder.list", "Listed a folder", []string{GroupLooks, GroupPath}},
	{"file.find", "Found files", []string{GroupLooks, GroupPath}},
	{"file.grep", "Searched in files", []string{GroupLooks, GroupPath}},
	{"command.run", "Ran a command", []string{GroupCommand}},
	{"command.cancel", "Stopped a command", nil},
	{"network.connect", "Used the network", nil},
	{"network.ask", "Asked about the network", nil},
	{"result.save", "Saved a report", []string{GroupPath, GroupLinks}},
	{"link.create", "Made a link", []string{GroupPath, GroupLinks}},
	{"files.out", "Link opened", []string{GroupPath}},
	{"links.rotate", "Reset all links", []string{GroupCorral, GroupOwner, GroupLinks}},
	{"link.revoke", "Withdrew a link", []string{GroupPath, GroupOwner, GroupLinks}},
	{"undo.apply", "Undid an event", nil},
	{"version.restore", "Restored a file", nil},
	{"versions.forget", "Forgot an agent's versions", []string{GroupOwner}},
	{"rule.create", "Rule added", []string{GroupOwner}},
	{"rule.revoke", "Rule revoked", []string{GroupOwner}},
	{"rule.update", "Rule changed", []string{GroupOwner}},
	{"rule.import", "Imported rules", []string{GroupOwner}},
	{"rule.export", "Exported rules", []string{GroupOwner}},
	{"agent.set_level", "Changed an agent's trust level", nil},
	{"agents.pause", "Paused agents", []string{GroupCorral, GroupOwner}},
	{"agents.resume", "Resumed agents", []string{GroupCorral, GroupOwner}},
	{"agent.pause", "Paused an agent", nil},
	{"agent.resume", "Resumed an agent", nil},
	{"agent.add", "Added an agent", nil},
	{"agent.update", "Changed an agent", nil},
	{"agent.rotate_key", "Gave an agent a new key", nil},
	{"agent.remove", "Removed an agent", nil},
	{"agent.connect", "Connected an agent", nil},
	{"agent.throttled", "Refused an agent's calls (too fast)", nil},
	{"person.add", "Added a person", nil},
	{"person.rename", "Renamed a person", nil},
	{"person.remove", "Removed a person", nil},
	{"config.reload", "Reloaded the settings", []string{GroupCorral, GroupOwner}},
	{"settings.set", "Changed a setting", []string{GroupCorral, GroupOwner}},
	{"corral.restart", "Restarted Corral", []string{GroupCorral, GroupOwner}},
	{"session.login", "Made a login link", []string{GroupCorral, GroupOwner}},
	{"pairing.start", "Showed a pairing code", []string{GroupCorral, GroupOwner}},
	{"device.pair", "Paired a device", []string{GroupCorral, GroupOwner}},
	{"device.revoke", "Revoked a device", []string{GroupCorral, GroupOwner}},
}

// DecisionLabels are the words for each Decision, in the order offered.
var DecisionLabels = []struct {
	Decision Decision
	Label    string
}{
	{Allow, "Allowed"},
	{Deny, "Denied"},
	{Error, "Failed"},
}

// OpsIn returns the names of the operations in group, in table order.
func OpsIn(group string) []string {
	var names []string
	for _, o := range Operations {
		for _, g := range o.Groups {
			if g == group {
				names = append(names, o.Name)
			}
		}
	}
	return names
}
