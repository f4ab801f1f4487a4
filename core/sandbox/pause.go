package sandbox

import (
	"corral/core/audit"
	"corral/core/errs"
	"corral/core/policy"
)

// refusePaused is the one check of the owner's pause before an agent's
// operation: every agent paused (the policy's pause, agents.pause) or
// this one (Caller.Paused, agent.pause). It returns the refusal in the
// one wording each has, or nil for the owner and an agent that may go
// on. beginOn makes it for every operation, commands included; what a
// pause does to work already under way is the policy's (questions
// withdrawn and denied with decided_by paused) and StopCommands'.
func (s *Sandbox) refusePaused(c Caller) error {
	switch {
	case c.Owner:
		return nil
	case s.policy != nil && s.policy.Paused():
		return errs.New(errs.Denied, "", "Agents are paused by the owner, so Corral refused this. It works again once the owner resumes agents.")
	case c.Paused:
		return errs.New(errs.Denied, "", "The owner has paused this agent (%s), so Corral refused this. It works again once the owner resumes it.", c.Client)
	}
	return nil
}

// stillMay asks the owner's pause and the agent's level again, as they
// are now, for an operation that began before and may have waited since
// (for a search slot, a document helper's slot, or before its change):
// the Caller it began with is not asked again, and agent.pause stops
// only listed commands. The refusal is recorded as the pause's or the
// level's. Nil for the owner, and without a policy.
func (o *op) stillMay(a policy.Access) error {
	if o.keeper == "" || o.s.policy == nil {
		return nil
	}
	by, err := o.s.policy.Holds(o.ev.Client, a)
	if err != nil {
		o.ev.Decision, o.ev.DecidedBy = audit.Deny, by
	}
	return err
}

// searchSlot waits for the operation's turn at a search (searchSlots),
// then asks the pause again (stillMay: a read).
func (o *op) searchSlot() (release func(), err error) {
	release, err = o.s.searchSlots.Acquire(o.ctx, o.ev.Client)
	if err != nil {
		return nil, err
	}
	if err := o.stillMay(policy.Read); err != nil {
		release()
		return nil, err
	}
	return release, nil
}
