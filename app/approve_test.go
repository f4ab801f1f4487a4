package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"corral/app/client"
	"corral/app/wire"
	"corral/core/policy"
	"corral/core/testkit/poll"
)

// corral approve lists a waiting approval with exactly the answers of
// policy's one table, allow row then deny row, and answers it by a
// button's words.
func TestCLIApprove(t *testing.T) {
	t.Parallel()
	r := startServe(t)
	owner, err := client.Dial(t.Context(), r.url, r.ownerKey)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.Call(t.Context(), "approval.subscribe", nil); err != nil {
		t.Fatal(err) // someone is there to ask
	}
	agent := exec.Command(r.bin, "call", "file.read", `{"path":"/etc/hostname"}`)
	agent.Env = r.agentEnv()
	type result struct {
		out []byte
		err error
	}
	res := make(chan result, 1)
	go func() { out, err := agent.CombinedOutput(); res <- result{out, err} }()

	var list struct {
		Pending []wire.PendingApproval `json:"pending"`
	}
	poll.EventuallyNil(t, 30*time.Second, func() error {
		if err := owner.CallInto(t.Context(), "approval.list", nil, &list); err != nil || len(list.Pending) == 0 {
			return fmt.Errorf("approval.list: %d pending, %v", len(list.Pending), err)
		}
		return nil
	}, "the agent's read to wait for an answer")
	a := list.Pending[0]

	cli := func(args ...string) string {
		t.Helper()
		c := exec.Command(r.bin, append([]string{"approve"}, args...)...)
		c.Env = r.envWith(r.ownerKey)
		b, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("corral approve %q: %v\n%s", args, err, b)
		}
		return string(b)
	}
	out := cli()
	var allow, deny []string
	for _, c := range wire.To[policy.Approval](a.Approval).Choices() {
		q, _ := json.Marshal(c.Label)
		if c.Decision == policy.AllowOnce {
			q = append(q, " (default)"...)
		}
		if c.Allows {
			allow = append(allow, string(q))
		} else {
			deny = append(deny, string(q))
		}
	}
	for _, want := range []string{a.ID + "  (1 of 1)", "\n  " + strings.Join(allow, " · ") + "\n  " + strings.Join(deny, " · ") + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("corral approve lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(strings.ToLower(out), "scope") {
		t.Errorf("corral approve says \"scope\":\n%s", out)
	}

	if got := cli(a.ID, "deny", "use the share folder instead"); !strings.Contains(got, "was denied.") {
		t.Errorf("answer: %q", got)
	}
	select {
	case r := <-res:
		if r.err == nil {
			t.Error("denied with corral approve, yet the read went through")
		}
		if !strings.Contains(string(r.out), "The owner denied access to /etc/hostname: use the share folder instead.") {
			t.Errorf("the agent's error lacks the reason:\n%s", r.out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent still waits after corral approve answered")
	}
}
