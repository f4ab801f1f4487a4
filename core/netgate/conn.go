package netgate

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// Dialer opens the network connections of one command. The egress proxy
// (app/egress) calls it for every HTTP CONNECT, plain HTTP request and
// SOCKS5 CONNECT the command makes; nothing else in Corral dials for a
// sandboxed command.
type Dialer interface {
	// Dial decides host:port for the command (its allowed domains, the
	// owner's rules and answers, the address checks) and, when allowed,
	// connects. host is a domain name or an IP literal as the program
	// named it; port is 1–65535. Dial never waits for the owner (the
	// owner was asked before the command started): it blocks only to
	// resolve and connect, and returns when ctx ends.
	//
	// A refusal is an *errs.Error (kind denied, or io/timeout for a
	// failed connect) whose message is one polite sentence the proxy
	// passes to the program as is, such as "Corral refused example.com:443:
	// it is not in this command's allowed_domains."
	Dial(ctx context.Context, host string, port int) (*Conn, error)
}

// Conn is one connection the gate allowed and opened. It embeds the
// upstream TCP connection, so io.Copy between it and the program's
// connection splices in the kernel.
//
// The proxy must count what it forwards and call Finish exactly once,
// after the connection ended, with the bytes sent upstream (up) and back
// to the program (down).
type Conn struct {
	*net.TCPConn

	// Budget is what the command may still send upstream over all its
	// connections together. Before forwarding n bytes upstream the proxy
	// calls Spend(n); when it answers false the proxy stops forwarding and
	// closes both sides. Nil: no limit.
	Budget *atomic.Int64

	// OnFinish, if set, is called once by Finish (the gate records the
	// connection's audit event there).
	OnFinish func(up, down int64)

	finish sync.Once
}

// Spend takes n bytes from the upload budget; false when the budget does
// not hold them (nothing is taken then).
func (c *Conn) Spend(n int64) bool {
	if c.Budget == nil || n <= 0 {
		return true
	}
	for {
		left := c.Budget.Load()
		if left < n {
			return false
		}
		if c.Budget.CompareAndSwap(left, left-n) {
			return true
		}
	}
}

// Finish closes the upstream connection and records its totals; later
// calls do nothing.
func (c *Conn) Finish(up, down int64) {
	c.finish.Do(func() {
		if c.TCPConn != nil {
			_ = c.TCPConn.Close()
		}
		if c.OnFinish != nil {
			c.OnFinish(up, down)
		}
	})
}
