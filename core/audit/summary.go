package audit

import (
	"context"
	"time"
)

// Summary is what one client did in a time range, counted from the log
// (audit.summary: "what did my agent do today?"). Every count is of the
// events of that client in [Since, Until).
type Summary struct {
	Client string
	Since  time.Time
	Until  time.Time
	// Files counts the distinct files changed (a file changed by several
	// calls counts once), in FileCalls calls.
	Files     int
	FileCalls int
	// Commands counts the commands run (started), CommandsFailed those
	// refused, failed or ended with an exit status other than 0.
	Commands       int
	CommandsFailed int
	// Domains are the hosts the client's commands connected to or tried,
	// the most used first.
	Domains []DomainCount
	// Questions counts the events the owner was asked about (answered,
	// or left unanswered until the question expired); Answers splits
	// them by answer, the most frequent first ("timeout" when nobody
	// answered).
	Questions int
	Answers   []AnswerCount
}

// DomainCount is one host of a Summary: connections allowed and refused.
type DomainCount struct {
	Domain  string
	Allowed int
	Denied  int
}

// AnswerCount is how many questions got one answer.
type AnswerCount struct {
	Answer string // policy's "allow_once", "deny_always" …, or "timeout"
	Count  int
}

// Summarizer is implemented by stores that can count one client's
// events in a range in one query.
type Summarizer interface {
	Summary(ctx context.Context, client string, since, until time.Time) (Summary, error)
}
