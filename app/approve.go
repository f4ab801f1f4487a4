package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"corral/app/wire"
	"corral/core/visible"
	"corral/core/words"
)

// runApprove is `corral approve`: without arguments it lists what waits
// for the owner and the answers each accepts; `corral approve ID ANSWER`
// answers one, ANSWER being a button's words ("Always deny") or its
// decision (deny_always); a deny may add REASON, a sentence the agent
// reads in its error.
func runApprove(args []string) error {
	var list wire.Pending
	if err := callOnce("approval.list", nil, &list); err != nil {
		return err
	}
	switch len(args) {
	case 0:
		printApprovals(os.Stdout, list.Pending)
		return nil
	case 2, 3:
	default:
		return errors.New(`usage: corral approve [ID ANSWER [REASON]], e.g. corral approve ap_1 "Allow once" or corral approve ap_1 Deny "use the share folder instead"; without arguments it lists what is waiting`)
	}
	for _, a := range list.Pending {
		if a.ID != args[0] {
			continue
		}
		for _, c := range a.Choices {
			if strings.EqualFold(c.Label, args[1]) || string(c.Decision) == args[1] {
				params := wire.RespondArgs{ID: a.ID, Decision: string(c.Decision)}
				if len(args) == 3 {
					if c.Allows {
						return errors.New("a reason goes with a deny only")
					}
					params.Reason = args[2]
				}
				var ignored json.RawMessage
				if err := callOnce("approval.respond", params, &ignored); err != nil {
					return err
				}
				fmt.Printf("%s was %s.\n", visible.Text(a.Client), c.Said)
				return nil
			}
		}
		return fmt.Errorf("%q is not an answer to %s; it takes one of: %s", args[1], a.ID, labels(a.Choices))
	}
	return fmt.Errorf("nothing with the id %q is waiting (answered or timed out already?)", args[0])
}

func labels(cs []wire.Choice) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%q", c.Label))
	}
	return strings.Join(out, ", ")
}

// printApprovals writes each waiting approval, then its answers: the
// allow row, the deny row, the default marked.
func printApprovals(w io.Writer, pending []wire.PendingApproval) {
	if len(pending) == 0 {
		fmt.Fprintln(w, "Nothing is waiting for an answer.")
		return
	}
	for i, a := range pending {
		fmt.Fprintf(w, "%s  (%d of %d)  %s\n", a.ID, i+1, len(pending), visible.Text(a.Description))
		if a.Sensitive != "" {
			fmt.Fprintf(w, "  %s\n", words.Careful(visible.Text(a.Sensitive)))
		}
		for _, allows := range []bool{true, false} {
			var row []string
			for _, c := range a.Choices {
				if c.Allows == allows {
					mark := ""
					if c.Decision == a.DefaultDecision {
						mark = " (default)"
					}
					row = append(row, fmt.Sprintf("%q%s", c.Label, mark))
				}
			}
			fmt.Fprintf(w, "  %s\n", strings.Join(row, " · "))
		}
	}
	fmt.Fprintln(w, `Answer with: corral approve ID "ANSWER"`)
}
