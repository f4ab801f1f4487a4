package daemon

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"corral/app/config"
)

// watchConfig reads config.toml again whenever it changes and hands it to
// the server (server.ReloadConfig): people and agents take effect at
// once; a file that does not validate is reported with the message
// start-up would give, and what runs stays as it was. It watches the
// folder, so editors that replace the file by renaming are seen too.
func (d *Daemon) watchConfig(ctx context.Context) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		d.Log.Warn("config.toml is not watched: changes need a restart", "err", err)
		return
	}
	defer w.Close()
	path := d.Files.Config
	if err := w.Add(filepath.Dir(path)); err != nil {
		d.Log.Warn("config.toml is not watched: changes need a restart", "err", err)
		return
	}
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
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if filepath.Clean(ev.Name) == path {
				timer = time.After(settle)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			d.Log.Warn("watching config.toml", "err", err)
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
