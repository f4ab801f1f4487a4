package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"corral/app/config"
	"corral/app/connect"
	"corral/app/rpc"
	"corral/core/errs"
	"corral/core/patch"
)

// Connecting an agent app (docs/agents.md "Connect an app"). The daemon writes
// the app's config file on the owner's behalf: the browser names an app
// from connect.Apps(), never a path, and the file is always the one that
// app documents under the owner's home folder. These are the owner's own
// files, not paths an agent influenced.

type connectParams struct {
	Name string `json:"name"`
	Key  string `json:"key,omitempty"` // the key shown when the agent was added or its key rotated
	App  string `json:"app,omitempty"`
	// Digest is the SHA-256 of the file the preview showed; a write
	// refuses a file that changed since.
	Digest string `json:"digest,omitempty"`
}

type connectApp struct {
	connect.App
	Path     string `json:"path,omitempty"` // the file on this computer
	Exists   bool   `json:"exists"`         // the file is there
	Writable bool   `json:"writable"`       // Corral can write itself into it now
	Snippet  string `json:"snippet"`
}

// keyPlaceholder stands for the key when the dashboard no longer has it.
const keyPlaceholder = "<the agent's key: rotate it to see a new one>"

// connectArea answers agent.connect, agent.connect_preview and
// agent.connect_write. It reads and writes the owner's own files under
// home; of the agents it needs only their keys' hashes.
type connectArea struct {
	keyOf   func(agent string) ([32]byte, bool) // the agent's key hash now (directory.keyOf)
	home    string                              // the owner's home folder; "": show, never write
	command string                              // the corral program apps start; "": this executable
	url     func() string                       // where apps reach Corral (Server.LocalURL)
	now     func() time.Time                    // names the backups
	record  recordFunc
	// cfgFile is config.toml; fromConfig reports whether an agent is
	// written there (its key is then in that file, not in the dashboard).
	cfgFile    string
	fromConfig func(agent string) bool
}

func (s *Server) connectArea() connectArea {
	return connectArea{keyOf: s.dir.KeyOf, home: s.ownerHome, command: s.corralCommand, url: s.LocalURL, now: s.now, record: s.record,
		cfgFile: s.cfg.Path, fromConfig: s.dir.FromConfig}
}

// inConfig is the config file an agent is written in, or "".
func (x connectArea) inConfig(name string) string {
	if x.fromConfig != nil && x.fromConfig(name) {
		return x.cfgFile
	}
	return ""
}

func (x connectArea) methods(add func(name string, m method)) {
	add("agent.connect", method{owner: true, fn: x.show})
	add("agent.connect_preview", method{owner: true, fn: x.preview})
	add("agent.connect_write", method{owner: true, fn: x.write})
}

// entry checks p names an agent and, when a key is given, that it is
// that agent's key.
func (x connectArea) entry(p connectParams) (connect.Entry, error) {
	hash, ok := x.keyOf(p.Name)
	if !ok {
		return connect.Entry{}, errs.New(errs.NotFound, "", "There is no agent called %q.", p.Name)
	}
	key := keyPlaceholder
	if f := x.inConfig(p.Name); f != "" {
		// Its key is in the owner's config file, and cannot be rotated
		// here: the placeholder says where it is.
		key = fmt.Sprintf("<%s's key: the key of its [[clients]] entry in %s>", p.Name, f)
	}
	if p.Key != "" {
		h := sha256.Sum256([]byte(p.Key))
		if subtle.ConstantTimeCompare(h[:], hash[:]) != 1 {
			return connect.Entry{}, errs.New(errs.InvalidParams, "", "That is not %s's current key; rotate the key to get one.", p.Name)
		}
		key = p.Key
	}
	cmd, _, _ := x.program()
	return connect.Entry{Command: cmd, URL: x.url(), Key: key}, nil
}

// program is the corral apps start: the configured command, else the
// installed program or the ~/.local/bin/corral link (connect.Program),
// never the build folder. link says the link is still to be made, to exe.
func (x connectArea) program() (cmd string, link bool, exe string) {
	if x.command != "" {
		return x.command, false, ""
	}
	exe, _ = os.Executable()
	cmd, link = connect.Program(exe, x.home)
	return cmd, link, exe
}

func (x connectArea) appPath(app connect.App) string {
	if app.File == "" || x.home == "" {
		return ""
	}
	return filepath.Join(x.home, filepath.FromSlash(app.File))
}

func (x connectArea) show(ctx context.Context, c *call) (any, error) {
	var p connectParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	if cmd, link, exe := x.program(); link {
		// A copied setup must name a program that is there: make the link
		// now (as `make run` does), or name this program if it cannot be.
		if err := connect.MakeLink(exe, x.home); err != nil {
			x.command = exe
		} else if err := x.record(ctx, c.caller.Client, "agent.connect", p.Name, "linked "+cmd+" to "+exe); err != nil {
			return nil, err
		}
	}
	e, err := x.entry(p)
	if err != nil {
		return nil, err
	}
	var out []connectApp
	for _, app := range connect.Apps() {
		ca := connectApp{App: app, Path: x.appPath(app), Snippet: app.Snippet(e)}
		if ca.Path != "" {
			if fi, err := os.Stat(ca.Path); err == nil && fi.Mode().IsRegular() {
				ca.Exists = true
			}
			// A missing file is created, with its folder, on Write.
			ca.Writable = app.Writable() && p.Key != ""
		}
		out = append(out, ca)
	}
	return connectResult{Apps: out, URL: e.URL, Command: e.Command, HasKey: p.Key != "", ConfigFile: x.inConfig(p.Name)}, nil
}

type connectPlan struct {
	App    string `json:"app"`
	Path   string `json:"path"`
	Diff   string `json:"diff"`   // from the file as it is to the file Corral would write
	Digest string `json:"digest"` // SHA-256 of the file as it is
	// Unchanged: the file already holds exactly this entry.
	Unchanged bool   `json:"unchanged,omitempty"`
	Backup    string `json:"backup,omitempty"` // after a write: where the old file is kept
	Written   bool   `json:"written,omitempty"`
	// Creates: the file (and perhaps its folder) is not there yet; the
	// write creates it, readable by the owner alone.
	Creates bool `json:"creates,omitempty"`
	// Link: the write also links ~/.local/bin/corral to this corral, the
	// stable command the file names.
	Link string `json:"link,omitempty"`
}

// plan reads the app's file and merges Corral into it.
func (x connectArea) plan(p connectParams) (connectPlan, []byte, os.FileMode, error) {
	app, ok := connect.Find(p.App)
	if !ok {
		return connectPlan{}, nil, 0, errs.New(errs.InvalidParams, "", "Corral does not know the app %q.", p.App)
	}
	if p.Key == "" {
		return connectPlan{}, nil, 0, errs.New(errs.InvalidParams, "", "Writing needs the agent's key: rotate the key to get one.")
	}
	e, err := x.entry(p)
	if err != nil {
		return connectPlan{}, nil, 0, err
	}
	path := x.appPath(app)
	if path == "" || !app.Writable() {
		return connectPlan{}, nil, 0, errs.New(errs.Unavailable, "", "Corral does not write %s's configuration; copy the snippet instead.", app.Title)
	}
	var old []byte
	mode := os.FileMode(0o600) // a new file holds the agent's key
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Created on Write, with its folder.
	case err != nil || !fi.Mode().IsRegular():
		return connectPlan{}, nil, 0, errs.New(errs.Conflict, "", "%s is not a plain file, so Corral does not write it; copy the snippet instead.", path)
	default:
		mode = fi.Mode().Perm()
		if old, err = os.ReadFile(path); err != nil {
			return connectPlan{}, nil, 0, errs.Wrap(err, errs.IO, "", "Corral could not read %s.", path)
		}
	}
	merged, err := app.Merge(old, e)
	if err != nil {
		return connectPlan{}, nil, 0, errs.New(errs.Conflict, "", "%s: %s", path, err)
	}
	sum := sha256.Sum256(old)
	plan := connectPlan{App: app.ID, Path: path, Digest: hex.EncodeToString(sum[:]),
		Diff: patch.Diff(app.File, app.File, old, merged), Unchanged: fi != nil && string(old) == string(merged), Creates: fi == nil}
	if cmd, link, _ := x.program(); link {
		plan.Link = cmd
	}
	return plan, merged, mode, nil
}

func (x connectArea) preview(ctx context.Context, c *call) (any, error) {
	var p connectParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	plan, _, _, err := x.plan(p)
	return plan, err
}

func (x connectArea) write(ctx context.Context, c *call) (any, error) {
	var p connectParams
	if err := rpc.DecodeParams(c.params, &p); err != nil {
		return nil, err
	}
	plan, merged, mode, err := x.plan(p)
	if err != nil {
		return nil, err
	}
	if p.Digest != "" && p.Digest != plan.Digest {
		return nil, errs.New(errs.Conflict, "", "%s changed since the preview; look at the new preview before writing.", plan.Path)
	}
	if plan.Link != "" {
		_, _, exe := x.program()
		if err := connect.MakeLink(exe, x.home); err != nil {
			return nil, errs.Wrap(err, errs.IO, "", "Corral could not link %s to %s, so it did not write %s.", plan.Link, exe, plan.Path)
		}
	}
	if plan.Unchanged {
		return plan, nil
	}
	var detail string
	if plan.Creates {
		if err := os.MkdirAll(filepath.Dir(plan.Path), 0o700); err != nil {
			return nil, errs.Wrap(err, errs.IO, "", "Corral could not make the folder %s.", filepath.Dir(plan.Path))
		}
		err := config.WriteAtomic(plan.Path, merged, mode, false)
		if errors.Is(err, fs.ErrExist) {
			return nil, errs.New(errs.Conflict, "", "%s appeared since the preview; look at the new preview before writing.", plan.Path)
		}
		if err != nil {
			return nil, errs.Wrap(err, errs.IO, "", "Corral could not write %s.", plan.Path)
		}
		detail = fmt.Sprintf("wrote %s into %s (a new file)", p.Name, plan.Path)
	} else {
		old, err := os.ReadFile(plan.Path)
		if err != nil {
			return nil, errs.Wrap(err, errs.IO, "", "Corral could not read %s.", plan.Path)
		}
		backup := plan.Path + ".corral-backup-" + x.now().Format("20060102-150405.000")
		if err := config.WriteAtomic(backup, old, mode, false); err != nil {
			return nil, errs.Wrap(err, errs.IO, "", "Corral could not keep a backup of %s, so it did not change it.", plan.Path)
		}
		if err := config.WriteAtomic(plan.Path, merged, mode, true); err != nil {
			return nil, errs.Wrap(err, errs.IO, "", "Corral could not write %s; the backup is %s.", plan.Path, backup)
		}
		plan.Backup = backup
		detail = fmt.Sprintf("wrote %s into %s (backup %s)", p.Name, plan.Path, backup)
	}
	plan.Written = true
	if plan.Link != "" {
		detail += "; linked " + plan.Link
	}
	if err := x.record(ctx, c.caller.Client, "agent.connect", p.Name, detail); err != nil {
		return nil, err
	}
	return plan, nil
}
