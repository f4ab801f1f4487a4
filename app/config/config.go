// Package config finds Corral's files, loads config.toml and validates it.
//
// Guarantees: a config is used only after it decoded and validated as a
// whole; an unknown key, a wrong type or a value out of range is an
// *Error naming the file, the line and the key, and nothing starts. Paths
// in it are absolute and cleaned ("~/" expanded), folder names are single
// safe segments, user ids and client names are unique and not reserved,
// and no two clients share a key. A missing config is written once with
// commented defaults and a fresh agent key (mode 0600; when two starts
// race, the second uses the first one's file). The link-signing key and
// the owner token are created when missing with mode 0600, in folders of
// mode 0700, through WriteAtomic: a reader sees no file or the whole one,
// and a key of the wrong size or a token too short is an error, never
// silently replaced.
//
// Not guaranteed: validation is of the text, not of the machine: whether
// a root exists, whether the sandbox base overlaps Corral's own folders
// (app/daemon checks that) or whether the listen address is free is found
// out when Corral starts. The default config is written in place, not
// atomically. Locate trusts CORRAL_HOME and the XDG variables as given.
package config

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"corral/core/killpoint"
	"corral/core/paths"
)

// Files are the places of Corral's own state (docs/protocol.md section 1).
type Files struct {
	Config     string
	DB         string
	Secret     string
	OwnerToken string
	Sandbox    string // default sandbox base
}

// OwnDirs are the folders holding Corral's own files: hidden from
// commands, never offered to the owner as a question, and kept apart from
// the sandboxes.
func (f Files) OwnDirs() []string {
	return []string{filepath.Dir(f.Config), filepath.Dir(f.DB), filepath.Dir(f.Secret), filepath.Dir(f.OwnerToken)}
}

// VersionsDir is the version store's folder, in Corral's data folder
// beside the database (never in the sandbox base; hidden from commands
// like the rest of that folder).
func (f Files) VersionsDir() string { return filepath.Join(filepath.Dir(f.DB), "versions") }

// LANCert is where the LAN side's certificate is kept, beside the secret.
func (f Files) LANCert() string { return filepath.Join(filepath.Dir(f.Secret), "lan-cert.pem") }

// Locate returns the file locations for the given environment lookup
// (os.LookupEnv in production). CORRAL_HOME puts everything in one folder;
// otherwise the XDG base directories apply.
func Locate(getenv func(string) string) (Files, error) {
	if home := getenv("CORRAL_HOME"); home != "" {
		abs, err := filepath.Abs(home)
		if err != nil {
			return Files{}, fmt.Errorf("CORRAL_HOME: %w", err)
		}
		return Files{
			Config:     filepath.Join(abs, "config.toml"),
			DB:         filepath.Join(abs, "corral.db"),
			Secret:     filepath.Join(abs, "secret.key"),
			OwnerToken: filepath.Join(abs, "owner.token"),
			Sandbox:    filepath.Join(abs, "sandbox"),
		}, nil
	}
	home := getenv("HOME")
	cfg := getenv("XDG_CONFIG_HOME")
	if cfg == "" || !filepath.IsAbs(cfg) {
		if home == "" {
			return Files{}, errors.New("neither CORRAL_HOME nor HOME is set: cannot tell where Corral's files live")
		}
		cfg = filepath.Join(home, ".config")
	}
	data := getenv("XDG_DATA_HOME")
	if data == "" || !filepath.IsAbs(data) {
		if home == "" {
			return Files{}, errors.New("neither CORRAL_HOME nor HOME is set: cannot tell where Corral's files live")
		}
		data = filepath.Join(home, ".local", "share")
	}
	d := filepath.Join(data, "corral")
	return Files{
		Config:     filepath.Join(cfg, "corral", "config.toml"),
		DB:         filepath.Join(d, "corral.db"),
		Secret:     filepath.Join(d, "secret.key"),
		OwnerToken: filepath.Join(d, "owner.token"),
		Sandbox:    filepath.Join(d, "sandbox"),
	}, nil
}

// Duration is a time.Duration that also accepts a "d" (day) suffix.
type Duration time.Duration

// ParseDuration parses Go duration syntax plus "7d" / "1d12h".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, 'd'); i > 0 {
		days, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		rest := time.Duration(0)
		if s[i+1:] != "" {
			if rest, err = time.ParseDuration(s[i+1:]); err != nil || rest < 0 {
				return 0, fmt.Errorf("invalid duration %q", s)
			}
		}
		return time.Duration(days)*24*time.Hour + rest, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use e.g. \"90s\", \"2m\", \"24h\" or \"7d\")", s)
	}
	return d, nil
}

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", b)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Config mirrors config.toml (docs/protocol.md section 2).
type Config struct {
	Server   Server   `toml:"server"`
	Sandbox  Sandbox  `toml:"sandbox"`
	Links    Links    `toml:"links"`
	Exec     Exec     `toml:"exec"`
	Audit    Audit    `toml:"audit"`
	Versions Versions `toml:"versions"`
	Desktop  Desktop  `toml:"desktop"`
	Users    []User   `toml:"users"`
	Clients  []Client `toml:"clients"`

	// Path is the file the config was read from.
	Path string `toml:"-"`
}

type Server struct {
	Listen          string `toml:"listen"`
	PublicURL       string `toml:"public_url"`
	LAN             bool   `toml:"lan"`
	MaxMessageBytes int64  `toml:"max_message_bytes"`
}

type Sandbox struct {
	Base            string   `toml:"base"`
	SharedDir       string   `toml:"shared_dir"`
	OutputDir       string   `toml:"output_dir"`
	Strict          bool     `toml:"strict"`
	ApprovalTimeout Duration `toml:"approval_timeout"`
	QuotaMB         int64    `toml:"quota_mb"` // most a scope folder or the shared folder may hold; 0: no quota
	Roots           []Root   `toml:"roots"`
}

type Root struct {
	Path   string `toml:"path"`
	Access string `toml:"access"`
}

type Links struct {
	Expiry          Duration `toml:"expiry"`
	MaxExpiry       Duration `toml:"max_expiry"`
	SaveResultMaxKB int      `toml:"save_result_max_kb"`
}

type Exec struct {
	Enabled     bool     `toml:"enabled"`
	Ask         bool     `toml:"ask"`
	Timeout     Duration `toml:"timeout"`
	MaxOutputKB int      `toml:"max_output_kb"`
	// Resource ceilings (docs/security.md, "Commands").
	MaxRunning         int      `toml:"max_running"`           // commands running at once, all agents
	MaxRunningPerAgent int      `toml:"max_running_per_agent"` // commands one agent runs at once
	MaxMemoryMB        int64    `toml:"max_memory_mb"`         // memory of one whole command (memory cgroup)
	QueueWait          Duration `toml:"queue_wait"`            // how long a command waits for a free slot
	// Network limits for commands given network (docs/security.md, "Network").
	MaxConnections int      `toml:"max_connections"` // open at once per command
	MaxUploadMB    int64    `toml:"max_upload_mb"`   // sent upstream per command
	AllowPrivate   []string `toml:"allow_private"`   // "host:port" on this computer or the LAN commands may reach
}

type Audit struct {
	Retention Duration `toml:"retention"`
	// Each agent's calls are taken up to AgentCallBurst at once, then
	// AgentCallsPerSecond (a token bucket); calls beyond are refused.
	AgentCallsPerSecond float64 `toml:"agent_calls_per_second"`
	AgentCallBurst      int     `toml:"agent_call_burst"`
}

// Versions is the budget of the version store (docs/undo.md).
type Versions struct {
	Enabled   bool     `toml:"enabled"`
	Retention Duration `toml:"retention"`   // how long a version is kept
	MaxSizeMB int64    `toml:"max_size_mb"` // total; 0: 5 GiB or 10% of the free space, whichever is smaller
	MaxFileMB int64    `toml:"max_file_mb"` // a larger file is recorded without its content
}

// Desktop is how the tray app speaks up on the owner's desktop.
type Desktop struct {
	Notifications bool `toml:"notifications"` // a desktop notification with each question
}

type User struct {
	ID   string `toml:"id"`
	Name string `toml:"name"`
}

type Client struct {
	Name      string   `toml:"name"`
	Key       string   `toml:"key"`
	KeySHA256 string   `toml:"key_sha256"`
	User      string   `toml:"user"`
	ActFor    []string `toml:"act_for"`
}

// KeyHash returns the SHA-256 of the client's key (from key or key_sha256).
func (c Client) KeyHash() [32]byte {
	if c.Key != "" {
		return sha256.Sum256([]byte(c.Key))
	}
	var h [32]byte
	b, _ := hex.DecodeString(c.KeySHA256) // validated at load
	copy(h[:], b)
	return h
}

// Defaults returns the configuration that applies to keys left out.
func Defaults() Config {
	return Config{
		Server:  Server{Listen: "127.0.0.1:8765", MaxMessageBytes: 16 << 20},
		Sandbox: Sandbox{SharedDir: "share", OutputDir: "output", Strict: true, ApprovalTimeout: Duration(2 * time.Minute)},
		Links:   Links{Expiry: Duration(24 * time.Hour), MaxExpiry: Duration(8760 * time.Hour), SaveResultMaxKB: 500},
		Exec: Exec{Enabled: true, Timeout: Duration(2 * time.Minute), MaxOutputKB: 1024, MaxConnections: 32, MaxUploadMB: 256,
			MaxRunning: 8, MaxRunningPerAgent: 4, MaxMemoryMB: 2048, QueueWait: Duration(30 * time.Second)},
		Audit:    Audit{Retention: Duration(2160 * time.Hour), AgentCallsPerSecond: 50, AgentCallBurst: 200},
		Versions: Versions{Enabled: true, Retention: Duration(30 * 24 * time.Hour), MaxFileMB: 256},
		Desktop:  Desktop{Notifications: true},
	}
}

// Error is a config problem with its place in the file.
type Error struct {
	File string
	Line int // 0 when unknown
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Load reads and validates the config at path, writing the commented
// default first when the file does not exist. home is the owner's home
// folder ("~" in roots); defaultBase is used when [sandbox] base is empty.
func Load(path, home, defaultBase string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if data, err = writeDefault(path); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, home, defaultBase)
}

// Parse decodes and validates config text; path names it in errors.
func Parse(path string, data []byte, home, defaultBase string) (*Config, error) {
	c := Defaults()
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, decodeError(path, data, err)
	}
	c.Path = path
	if c.Sandbox.Base == "" {
		c.Sandbox.Base = defaultBase
	}
	loc := newLocator(data)
	if err := c.validate(home); err != nil {
		var ve *Error
		if errors.As(err, &ve) {
			ve.File = path
			ve.Line = loc.line(ve.Key)
			return nil, ve
		}
		return nil, err
	}
	return &c, nil
}

func decodeError(path string, data []byte, err error) error {
	e := &Error{File: path, Msg: err.Error()}
	var se *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case errors.As(err, &se) && len(se.Errors) > 0:
		row, _ := se.Errors[0].Position()
		e.Line, e.Key = row, strings.Join(se.Errors[0].Key(), ".")
		e.Msg = "unknown key (docs/protocol.md section 2 lists the keys Corral reads)"
	case errors.As(err, &de):
		row, _ := de.Position()
		e.Line, e.Key = row, strings.Join(de.Key(), ".")
		e.Msg = strings.TrimPrefix(firstLine(de.Error()), "toml: ")
	}
	if e.Key == "" && e.Line > 0 {
		e.Key = newLocator(data).keyAt(e.Line)
	}
	return e
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Reserved scope names: a user with one of these ids would share a folder
// with the companion, the default scope or the shared folder.
var reserved = []string{"companion", "default"}

func (c *Config) validate(home string) error {
	bad := func(key, format string, args ...any) error {
		return &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	s := &c.Server
	if _, _, err := net.SplitHostPort(s.Listen); err != nil {
		return bad("server.listen", "%q is not a HOST:PORT address", s.Listen)
	}
	if s.PublicURL != "" {
		u, err := url.Parse(s.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return bad("server.public_url", "%q is not an http(s) URL", s.PublicURL)
		}
		s.PublicURL = strings.TrimRight(s.PublicURL, "/")
	}
	if s.MaxMessageBytes < 4096 || s.MaxMessageBytes > 1<<30 {
		return bad("server.max_message_bytes", "must be between 4096 and 1073741824")
	}

	sb := &c.Sandbox
	sb.Base = expandHome(sb.Base, home)
	if !filepath.IsAbs(sb.Base) {
		return bad("sandbox.base", "%q must be an absolute path (or start with ~/)", sb.Base)
	}
	sb.Base = filepath.Clean(sb.Base)
	for key, v := range map[string]string{"sandbox.shared_dir": sb.SharedDir, "sandbox.output_dir": sb.OutputDir} {
		if !paths.SafeSegment(v) {
			return bad(key, "%q must be a single folder name of letters, digits, '_' or '-'", v)
		}
	}
	if strings.EqualFold(sb.SharedDir, sb.OutputDir) {
		return bad("sandbox.output_dir", "must differ from shared_dir")
	}
	if sb.ApprovalTimeout.D() < time.Second {
		return bad("sandbox.approval_timeout", "must be at least 1s")
	}
	for i := range sb.Roots {
		r := &sb.Roots[i]
		key := fmt.Sprintf("sandbox.roots[%d]", i)
		r.Path = expandHome(r.Path, home)
		if !filepath.IsAbs(r.Path) {
			return bad(key+".path", "%q must be an absolute path (or start with ~/)", r.Path)
		}
		r.Path = filepath.Clean(r.Path)
		if r.Path == "/" {
			return bad(key+".path", "the whole file system cannot be a sandbox root")
		}
		if r.Access == "" {
			r.Access = "read"
		}
		if r.Access != "read" && r.Access != "readwrite" {
			return bad(key+".access", "%q must be \"read\" or \"readwrite\"", r.Access)
		}
	}

	l := &c.Links
	if l.Expiry.D() <= 0 || l.MaxExpiry.D() <= 0 || l.Expiry > l.MaxExpiry {
		return bad("links.expiry", "must be positive and no longer than links.max_expiry")
	}
	if l.SaveResultMaxKB <= 0 {
		return bad("links.save_result_max_kb", "must be positive")
	}
	if c.Exec.Timeout.D() < time.Second {
		return bad("exec.timeout", "must be at least 1s")
	}
	if c.Sandbox.QuotaMB < 0 {
		return bad("sandbox.quota_mb", "must be 0 (no quota) or positive")
	}
	if c.Exec.MaxRunning <= 0 {
		return bad("exec.max_running", "must be positive")
	}
	if c.Exec.MaxRunningPerAgent <= 0 {
		return bad("exec.max_running_per_agent", "must be positive")
	}
	if c.Exec.MaxMemoryMB < 64 {
		return bad("exec.max_memory_mb", "must be at least 64")
	}
	if c.Exec.MaxConnections <= 0 {
		return bad("exec.max_connections", "must be positive")
	}
	if c.Exec.MaxUploadMB <= 0 {
		return bad("exec.max_upload_mb", "must be positive")
	}
	for _, hp := range c.Exec.AllowPrivate {
		if _, port, err := net.SplitHostPort(hp); err != nil || port == "" || port == "0" {
			return bad("exec.allow_private", "%q must be host:port, such as \"192.168.1.20:8123\"", hp)
		}
	}
	if c.Exec.MaxOutputKB <= 0 {
		return bad("exec.max_output_kb", "must be positive")
	}
	if c.Audit.Retention.D() < time.Hour {
		return bad("audit.retention", "must be at least 1h")
	}
	if !(c.Audit.AgentCallsPerSecond > 0) {
		return bad("audit.agent_calls_per_second", "must be positive")
	}
	if c.Audit.AgentCallBurst <= 0 {
		return bad("audit.agent_call_burst", "must be positive")
	}
	if c.Versions.Retention.D() < time.Hour {
		return bad("versions.retention", "must be at least 1h")
	}
	if c.Versions.MaxSizeMB < 0 {
		return bad("versions.max_size_mb", "must not be negative")
	}
	if c.Versions.MaxFileMB <= 0 {
		return bad("versions.max_file_mb", "must be positive")
	}

	users := map[string]bool{}
	for i, u := range c.Users {
		key := fmt.Sprintf("users[%d].id", i)
		if !paths.SafeSegment(u.ID) {
			return bad(key, "%q is not a safe folder name: use 1 to 64 letters, digits, '_' or '-'", u.ID)
		}
		for _, r := range append(reserved, sb.SharedDir) {
			if strings.EqualFold(u.ID, r) {
				return bad(key, "%q is reserved for the %s folder", u.ID, r)
			}
		}
		if users[u.ID] {
			return bad(key, "user %q is defined twice", u.ID)
		}
		users[u.ID] = true
	}
	names := map[string]bool{}
	keys := map[[32]byte]bool{}
	for i, cl := range c.Clients {
		key := func(k string) string { return fmt.Sprintf("clients[%d].%s", i, k) }
		if cl.Name == "" || len(cl.Name) > 64 || cl.Name == "owner" {
			return bad(key("name"), "a client needs a name of at most 64 characters other than \"owner\"")
		}
		if names[cl.Name] {
			return bad(key("name"), "client %q is defined twice", cl.Name)
		}
		names[cl.Name] = true
		switch {
		case cl.Key != "" && cl.KeySHA256 != "":
			return bad(key("key"), "set key or key_sha256, not both")
		case cl.Key != "":
			if len(cl.Key) < 16 {
				return bad(key("key"), "is too short: use at least 16 random characters")
			}
		case cl.KeySHA256 != "":
			if b, err := hex.DecodeString(cl.KeySHA256); err != nil || len(b) != 32 {
				return bad(key("key_sha256"), "must be 64 hexadecimal digits")
			}
		default:
			return bad(key("key"), "client %q has no key", cl.Name)
		}
		h := cl.KeyHash()
		if keys[h] {
			return bad(key("key"), "the same key is used by two clients")
		}
		keys[h] = true
		if !users[cl.User] && cl.User != "companion" && cl.User != "default" {
			return bad(key("user"), "names unknown user %q (define it under [[users]], or use \"companion\" or \"default\")", cl.User)
		}
		for _, a := range cl.ActFor {
			if a != "*" && !users[a] && a != "companion" && a != "default" {
				return bad(key("act_for"), "names unknown user %q", a)
			}
		}
	}
	return nil
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// Layout returns the path layout core uses.
func (c *Config) Layout(home string) paths.Layout {
	l := paths.Layout{Base: c.Sandbox.Base, SharedDir: c.Sandbox.SharedDir, OutputDir: c.Sandbox.OutputDir, Home: home}
	for _, r := range c.Sandbox.Roots {
		l.Roots = append(l.Roots, paths.Root{Path: r.Path, Access: paths.Access(r.Access)})
	}
	return l
}

// UserIDs lists the configured user ids.
func (c *Config) UserIDs() []string {
	ids := make([]string, len(c.Users))
	for i, u := range c.Users {
		ids[i] = u.ID
	}
	return ids
}

func writeDefault(path string) ([]byte, error) {
	name := loginName()
	key, err := randomToken(24)
	if err != nil {
		return nil, err
	}
	data := []byte(fmt.Sprintf(defaultTemplate, name, name, key, name))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create config folder: %w", err)
	}
	// Written whole under a temporary name, then linked into place: a
	// program starting at the same moment (the daemon and `corral call`,
	// say) finds either no config.toml or all of it, never one created
	// but not yet written, which it would read as a config with no agent.
	if err := WriteAtomic(path, data, 0o600, false); errors.Is(err, os.ErrExist) { // another start won the race: use its file
		return os.ReadFile(path)
	} else if err != nil {
		return nil, fmt.Errorf("write default config: %w", err)
	}
	return data, nil
}

// loginName is the owner's login name made a safe segment.
func loginName() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 64 {
		s = s[:64]
	}
	for _, r := range append(reserved, "share") {
		if strings.EqualFold(s, r) {
			s = ""
		}
	}
	if s == "" {
		s = "owner"
	}
	return s
}

func randomToken(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// EnsureSecret returns the 32-byte link-signing key at path, creating it
// (mode 0600) when missing. A file of the wrong size is an error.
func EnsureSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		b = make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		if err := writeSecretFile(path, b, false); err != nil {
			return nil, err
		}
		return os.ReadFile(path) // another start may have written it first
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) != 32 {
		return nil, fmt.Errorf("%s holds %d bytes, not 32: delete it to make a new one (every link stops working)", path, len(b))
	}
	return b, nil
}

// RotateSecret replaces the link-signing key with a fresh one.
func RotateSecret(path string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, writeSecretFile(path, b, true)
}

// EnsureOwnerToken returns the owner token at path, creating it when missing.
func EnsureOwnerToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		tok, err := randomToken(32)
		if err != nil {
			return "", err
		}
		if err := writeSecretFile(path, []byte(tok+"\n"), false); err != nil {
			return "", err
		}
		return EnsureOwnerToken(path) // another start may have written it first
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return "", fmt.Errorf("%s is too short to be an owner token: delete it to make a new one", path)
	}
	return tok, nil
}

// writeSecretFile writes data with mode 0600 atomically; without replace
// a file another process wrote first is kept.
func writeSecretFile(path string, data []byte, replace bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := WriteAtomic(path, data, 0o600, replace); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// WriteAtomic writes data with mode to path through a temporary file in
// the same folder, synced before it takes the name: path is either absent,
// as it was, or complete. With replace it takes the place of what is
// there; without, an existing path is left alone and the error satisfies
// errors.Is(err, os.ErrExist).
func WriteAtomic(path string, data []byte, mode os.FileMode, replace bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".corral-tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	killpoint.Here("config.rename")
	if replace {
		return os.Rename(tmp.Name(), path)
	}
	return os.Link(tmp.Name(), path) // fails if path exists
}

// RemoveTemps removes from dir the temporary files WriteAtomic leaves
// when the process is killed between making one and renaming it
// (".corral-tmp-" and decimal digits, as os.CreateTemp names them) whose
// modification time is before since, and returns how many it removed.
// Any other name is left alone, and so is a newer file: another process
// may be writing it now.
func RemoveTemps(dir string, since time.Time) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		digits, ok := strings.CutPrefix(e.Name(), ".corral-tmp-")
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err != nil || !fi.ModTime().Before(since) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

// CheckRoots refuses a sandbox base that is or contains one of Corral's
// own folders (a user or the shared folder would be one of them), and
// [[sandbox.roots]] that are, contain or lie inside the sandbox base or
// Corral's own folders: agents would reach the secrets or other users'
// folders through them. Paths are compared by their real names. The
// daemon checks it before it takes its lock, wiring.Build before it wires
// anything, and a reloaded config before it is taken.
func (cfg *Config) CheckRoots(files Files) error {
	real := paths.Resolved
	own := files.OwnDirs()
	base := real(cfg.Sandbox.Base)
	for _, p := range own {
		if paths.Within(real(p), base) {
			return &Error{File: cfg.Path, Key: "sandbox.base",
				Msg: fmt.Sprintf("%q contains %s, which holds Corral's own files; agents' folders would reach them. Choose a folder that does not contain it", cfg.Sandbox.Base, p)}
		}
	}
	private := append([]string{cfg.Sandbox.Base}, own...)
	for i, r := range cfg.Sandbox.Roots {
		root := real(r.Path)
		for _, p := range private {
			if paths.Overlap(root, real(p)) {
				return &Error{File: cfg.Path, Key: fmt.Sprintf("sandbox.roots[%d].path", i),
					Msg: fmt.Sprintf("%q overlaps %s, which holds Corral's own files or the sandboxes; choose a folder that neither contains nor lies inside it", r.Path, p)}
			}
		}
	}
	return nil
}
