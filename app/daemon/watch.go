package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"corral/app/config"
)

// watchConfig reads config.toml again whenever it changes and hands it to
// the server (server.ReloadConfig): people and agents take effect at
// once; a file that does not validate is reported with the message
// start-up would give, and what runs stays as it was. See fileWatch for
// which changes are seen.
func (d *Daemon) watchConfig(ctx context.Context) {
	path := d.Files.Config
	w, err := newFileWatch(path)
	if err != nil {
		d.Log.Warn("config.toml is not watched: changes need a restart", "err", err)
		return
	}
	changed := make(chan struct{}, 1)
	go func() {
		if err := w.run(ctx, func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}); err != nil {
			d.Log.Warn("config.toml is no longer watched: changes need a restart", "err", err)
		}
	}()
	var last []byte
	if b, err := os.ReadFile(path); err == nil {
		last = b
	}
	const settle = 150 * time.Millisecond // editors write in steps
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			timer = time.After(settle)
		case <-timer:
			timer = nil
			data, err := os.ReadFile(path)
			if err != nil || string(data) == string(last) {
				continue
			}
			last = data
			cfg, err := config.Parse(path, data, d.home, d.Files.Sandbox)
			if err == nil {
				err = cfg.CheckRoots(d.Files)
			}
			msg := d.Server.ReloadConfig(ctx, cfg, err)
			d.Log.Info("config.toml changed", "result", msg)
		}
	}
}

// fileWatchMask is what fileWatch asks the kernel for about the folder: a
// file written and closed there, or renamed into it. Writes to files that
// stay open (SQLite's database and -wal beside config.toml, on every
// audit commit) are IN_MODIFY, which is not asked for, so they never wake
// the watcher.
const fileWatchMask = unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO

// fileWatch watches one file through inotify on its folder, with a mask
// that leaves out the folder's other traffic and a name filter for the
// rest (another file closed or renamed there).
//
// Guarantees: a write of the file that is closed (an editor saving in
// place, `echo >> config.toml`) and another file renamed onto it (editors
// that save by rename, vim's backup-then-write included, since the new
// file is closed after writing) are reported; a full event queue is
// reported as a change.
//
// Not guaranteed: writes by a process that keeps the file open without
// closing it (or through mmap) are not seen until it closes the file; a
// change of mode or owner alone is not reported.
type fileWatch struct {
	f    *os.File // the inotify descriptor, non-blocking, in Go's poller
	name string   // the file's name in its folder
	// wakeups counts the reads that returned events, for tests: each is
	// a time the kernel woke this watcher.
	wakeups atomic.Int64
}

func newFileWatch(path string) (*fileWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), fileWatchMask|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watch %s: %w", filepath.Dir(path), err)
	}
	return &fileWatch{f: os.NewFile(uintptr(fd), "inotify"), name: filepath.Base(path)}, nil
}

// run calls changed for each change of the file until ctx ends (nil) or
// the folder goes away or reading fails (an error); it closes the watch.
func (w *fileWatch) run(ctx context.Context, changed func()) error {
	stop := context.AfterFunc(ctx, func() { w.f.Close() })
	defer stop()
	defer w.f.Close()
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, os.ErrClosed) {
				return nil
			}
			return err
		}
		w.wakeups.Add(1)
		hit := false
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				hit = true
			case ev.Mask&unix.IN_IGNORED != 0:
				return errors.New("the folder of " + w.name + " was removed")
			case string(trimNUL(name)) == w.name:
				hit = true
			}
		}
		if hit {
			changed()
		}
	}
}

func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}
