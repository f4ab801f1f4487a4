package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Serve receives the listening socket corral-netinit makes inside the
// sandbox on ours and hands every connection accepted on it to egress,
// at most max at once. The
// returned stop closes the listener, cancels the handlers' context and
// waits for them.
func Serve(ctx context.Context, ours *os.File, max int, egress func(context.Context, net.Conn), log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu       sync.Mutex
		ln       net.Listener
		stopped  bool
		handlers sync.WaitGroup
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Blocks until corral-netinit sends the listener, or every copy of
		// the sandbox's end is closed (bwrap failed or the command ended).
		l, err := receiveListener(ours)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Warn("execbox: no proxy listener from the sandbox", "err", err)
			}
			return
		}
		mu.Lock()
		if stopped {
			mu.Unlock()
			_ = l.Close()
			return
		}
		ln = l
		mu.Unlock()
		// At most max at once (execbox.MaxProxyConns): each costs the
		// daemon a descriptor. The rest wait in the sandbox's kernel.
		slots := make(chan struct{}, max)
		for {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			c, err := l.Accept()
			if err != nil {
				return
			}
			handlers.Go(func() {
				defer func() { <-slots }()
				defer c.Close()
				egress(ctx, c)
			})
		}
	}()
	return func() {
		mu.Lock()
		stopped = true
		if ln != nil {
			_ = ln.Close()
		}
		mu.Unlock()
		cancel()
		// The command has ended: every copy of the sandbox's end is closed,
		// so a receive still waiting returns.
		<-done
		handlers.Wait()
	}
}

// receiveListener reads the one message corral-netinit sends: a byte and
// the listening socket as SCM_RIGHTS.
func receiveListener(f *os.File) (net.Listener, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if n == 0 && oobn == 0 {
		return nil, io.EOF
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("bad control message (%d, %v)", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return nil, fmt.Errorf("bad descriptors (%d, %v)", len(fds), err)
	}
	lf := os.NewFile(uintptr(fds[0]), "proxy-listener")
	defer lf.Close() // FileListener dups it
	return net.FileListener(lf)
}
