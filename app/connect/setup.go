package connect

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
	"corral/core/errs"
	"corral/core/patch"
)

// Connecting an agent app (docs/agents.md "Connect an app"). The daemon writes
// the app's config file on the owner's behalf: the browser names an app
// from Apps(), never a path, and the file is always the one that
// app documents under the owner's home folder. These are the owner's own
// files, not paths an agent influenced.

// Params are agent.connect's, agent.connect_preview's and
// agent.connect_write's.
type Params struct {
	Name string `json:"name"`
	Key  string `json:"key,omitempty"` // the key shown when the agent was added or its key rotated
	App  string `json:"app,omitempty"`
	// Digest is the SHA-256 of the file the preview showed; a write
	// refuses a file that changed since.
	Digest string `json:"digest,omitempty"`
}

// AppSetup is one app as agent.connect shows it.
type AppSetup struct {
	App
	Path     string `json:"path,omitempty"` // the file on this computer
	Exists   bool   `json:"exists"`         // the file is there
	Writable bool   `json:"writable"`       // Corral can write itself into it now
	Snippet  string `json:"snippet"`
}

// Shown answers agent.connect: each app's snippet, and the entry
// they share (has_key: the snippets carry the agent's key).
type Shown struct {
	Apps    []AppSetup `json:"apps"`
	Command string     `json:"command"`
	HasKey  bool       `json:"has_key"`
	URL     string     `json:"url"`
	// ConfigFile is config.toml when the agent is written there: its key
	// is in that file.
	ConfigFile string `json:"config_file,omitempty"`
}

// KeyPlaceholder stands for the key when the dashboard no longer has it.
const KeyPlaceholder = "<the agent's key: rotate it to see a new one>"

// Setup answers agent.connect (Show), agent.connect_preview (Preview)
// and agent.connect_write (Write). It reads and writes the owner's own
// files under Home; of the agents it needs only their keys' hashes.
type Setup struct {
	KeyOf   func(agent string) ([32]byte, bool) // the agent's key hash now (directory's KeyOf)
	Home    string                              // the owner's home folder; "": show, never write
	Command string                              // the corral program apps start; "": this executable
	URL     func() string                       // where apps reach Corral (Server.LocalURL)
	Now     func() time.Time                    // names the backups
	// Record writes one line of the audit log; a write's answer is
	// withheld when it fails.
	Record func(ctx context.Context, who, op, target, detail string) error
	// ConfigFile is config.toml; FromConfig reports whether an agent is
	// written there (its key is then in that file, not in the dashboard).
	ConfigFile string
	FromConfig func(agent string) bool
}

// inConfig is the config file an agent is written in, or "".
func (x Setup) inConfig(name string) string {
	if x.FromConfig != nil && x.FromConfig(name) {
		return x.ConfigFile
	}
	return ""
}

// entry checks p names an agent and, when a key is given, that it is
// that agent's key.
func (x Setup) entry(p Params) (Entry, error) {
	hash, ok := x.KeyOf(p.Name)
	if !ok {
		return Entry{}, errs.New(errs.NotFound, "", "There is no agent called %q.", p.Name)
	}
	key := KeyPlaceholder
	if f := x.inConfig(p.Name); f != "" {
		// Its key is in the owner's config file, and cannot be rotated
		// here: the placeholder says where it is.
		key = fmt.Sprintf("<%s's key: the key of its [[clients]] entry in %s>", p.Name, f)
	}
	if p.Key != "" {
		h := sha256.Sum256([]byte(p.Key))
		if subtle.ConstantTimeCompare(h[:], hash[:]) != 1 {
			return Entry{}, errs.New(errs.InvalidParams, "", "That is not %s's current key; rotate the key to get one.", p.Name)
		}
		key = p.Key
	}
	cmd, _, _ := x.program()
	return Entry{Command: cmd, URL: x.URL(), Key: key}, nil
}

// program is the corral apps start: the configured command, else the
// installed program or the ~/.local/bin/corral link (Program),
// never the build folder. link says the link is still to be made, to exe.
func (x Setup) program() (cmd string, link bool, exe string) {
	if x.Command != "" {
		return x.Command, false, ""
	}
	exe, _ = os.Executable()
	cmd, link = Program(exe, x.Home)
	return cmd, link, exe
}

func (x Setup) appPath(app App) string {
	if app.File == "" || x.Home == "" {
		return ""
	}
	return filepath.Join(x.Home, filepath.FromSlash(app.File))
}

// Show is agent.connect: every app's snippet for the agent p names
// (with its key when p gives it), and whether Corral can write the
// app's file. by is who asks, for the audit log.
func (x Setup) Show(ctx context.Context, by string, p Params) (Shown, error) {
	if cmd, link, exe := x.program(); link {
		// A copied setup must name a program that is there: make the link
		// now (as `make run` does), or name this program if it cannot be.
		if err := MakeLink(exe, x.Home); err != nil {
			x.Command = exe
		} else if err := x.Record(ctx, by, "agent.connect", p.Name, "linked "+cmd+" to "+exe); err != nil {
			return Shown{}, err
		}
	}
	e, err := x.entry(p)
	if err != nil {
		return Shown{}, err
	}
	var out []AppSetup
	for _, app := range Apps() {
		ca := AppSetup{App: app, Path: x.appPath(app), Snippet: app.Snippet(e)}
		if ca.Path != "" {
			if fi, err := os.Stat(ca.Path); err == nil && fi.Mode().IsRegular() {
				ca.Exists = true
			}
			// A missing file is created, with its folder, on Write.
			ca.Writable = app.Writable() && p.Key != ""
		}
		out = append(out, ca)
	}
	return Shown{Apps: out, URL: e.URL, Command: e.Command, HasKey: p.Key != "", ConfigFile: x.inConfig(p.Name)}, nil
}

// Plan answers agent.connect_preview and agent.connect_write.
type Plan struct {
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
func (x Setup) plan(p Params) (Plan, []byte, os.FileMode, error) {
	app, ok := Find(p.App)
	if !ok {
		return Plan{}, nil, 0, errs.New(errs.InvalidParams, "", "Corral does not know the app %q.", p.App)
	}
	if p.Key == "" {
		return Plan{}, nil, 0, errs.New(errs.InvalidParams, "", "Writing needs the agent's key: rotate the key to get one.")
	}
	e, err := x.entry(p)
	if err != nil {
		return Plan{}, nil, 0, err
	}
	path := x.appPath(app)
	if path == "" || !app.Writable() {
		return Plan{}, nil, 0, errs.New(errs.Unavailable, "", "Corral does not write %s's configuration; copy the snippet instead.", app.Title)
	}
	var old []byte
	mode := os.FileMode(0o600) // a new file holds the agent's key
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Created on Write, with its folder.
	case err != nil || !fi.Mode().IsRegular():
		return Plan{}, nil, 0, errs.New(errs.Conflict, "", "%s is not a plain file, so Corral does not write it; copy the snippet instead.", path)
	default:
		mode = fi.Mode().Perm()
		if old, err = os.ReadFile(path); err != nil {
			return Plan{}, nil, 0, errs.Wrap(err, errs.IO, "", "Corral could not read %s.", path)
		}
	}
	merged, err := app.Merge(old, e)
	if err != nil {
		return Plan{}, nil, 0, errs.New(errs.Conflict, "", "%s: %s", path, err)
	}
	sum := sha256.Sum256(old)
	plan := Plan{App: app.ID, Path: path, Digest: hex.EncodeToString(sum[:]),
		Diff: patch.Diff(app.File, app.File, old, merged), Unchanged: fi != nil && string(old) == string(merged), Creates: fi == nil}
	if cmd, link, _ := x.program(); link {
		plan.Link = cmd
	}
	return plan, merged, mode, nil
}

// Preview is agent.connect_preview: what Write would change in the
// app's file, as a diff; it writes nothing and records nothing.
func (x Setup) Preview(ctx context.Context, by string, p Params) (Plan, error) {
	plan, _, _, err := x.plan(p)
	return plan, err
}

// Write is agent.connect_write: Corral's entry merged into the app's
// file (a backup of the old file kept beside it, or the file created
// owner-only), refused when the file changed since the preview whose
// Digest p gives. The write is recorded before its answer.
func (x Setup) Write(ctx context.Context, by string, p Params) (Plan, error) {
	plan, merged, mode, err := x.plan(p)
	if err != nil {
		return Plan{}, err
	}
	if p.Digest != "" && p.Digest != plan.Digest {
		return Plan{}, errs.New(errs.Conflict, "", "%s changed since the preview; look at the new preview before writing.", plan.Path)
	}
	if plan.Link != "" {
		_, _, exe := x.program()
		if err := MakeLink(exe, x.Home); err != nil {
			return Plan{}, errs.Wrap(err, errs.IO, "", "Corral could not link %s to %s, so it did not write %s.", plan.Link, exe, plan.Path)
		}
	}
	if plan.Unchanged {
		return plan, nil
	}
	var detail string
	if plan.Creates {
		if err := os.MkdirAll(filepath.Dir(plan.Path), 0o700); err != nil {
			return Plan{}, errs.Wrap(err, errs.IO, "", "Corral could not make the folder %s.", filepath.Dir(plan.Path))
		}
		err := config.WriteAtomic(plan.Path, merged, mode, false)
		if errors.Is(err, fs.ErrExist) {
			return Plan{}, errs.New(errs.Conflict, "", "%s appeared since the preview; look at the new preview before writing.", plan.Path)
		}
		if err != nil {
			return Plan{}, errs.Wrap(err, errs.IO, "", "Corral could not write %s.", plan.Path)
		}
		detail = fmt.Sprintf("wrote %s into %s (a new file)", p.Name, plan.Path)
	} else {
		old, err := os.ReadFile(plan.Path)
		if err != nil {
			return Plan{}, errs.Wrap(err, errs.IO, "", "Corral could not read %s.", plan.Path)
		}
		backup := plan.Path + ".corral-backup-" + x.Now().Format("20060102-150405.000")
		if err := config.WriteAtomic(backup, old, mode, false); err != nil {
			return Plan{}, errs.Wrap(err, errs.IO, "", "Corral could not keep a backup of %s, so it did not change it.", plan.Path)
		}
		if err := config.WriteAtomic(plan.Path, merged, mode, true); err != nil {
			return Plan{}, errs.Wrap(err, errs.IO, "", "Corral could not write %s; the backup is %s.", plan.Path, backup)
		}
		plan.Backup = backup
		detail = fmt.Sprintf("wrote %s into %s (backup %s)", p.Name, plan.Path, backup)
	}
	plan.Written = true
	if plan.Link != "" {
		detail += "; linked " + plan.Link
	}
	if err := x.Record(ctx, by, "agent.connect", p.Name, detail); err != nil {
		return Plan{}, err
	}
	return plan, nil
}
