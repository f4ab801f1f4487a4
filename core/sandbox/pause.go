package sandbox

import "corral/core/errs"

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
