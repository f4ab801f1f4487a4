// Package documents answers file.document_read over the sandbox's
// operation skeleton (sandbox.Op): the file is resolved, decided and
// read through the sandbox (Op.Target, fsbox), and its bytes are parsed
// by Corral's document reader (core/docread) run as a helper inside
// execbox.RunHelper, which never opens a path.
//
// Guarantees: a document is parsed only inside the sandboxed helper,
// never in the daemon's process; the helper has its own slots (Config:
// at most MaxHelpers at once, MaxPerClient for one agent), and a file is
// held in memory only while its read holds a slot; each read is one
// audit event, recorded before the answer (Op.End), refusals included.
//
// Not guaranteed: without a Runner that works here (bubblewrap),
// documents are unavailable and each read says so.
package documents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"regexp"
	"runtime"
	"strings"
	"time"

	"corral/core/docread"
	"corral/core/errs"
	"corral/core/execbox"
	"corral/core/fsbox"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/slots"
)

// MaxDocumentBytes is the largest file file.document_read reads.
const MaxDocumentBytes = docread.MaxInput

// Config configures file.document_read: the parser runs as Binary with
// Args (and the file's extension appended) inside execbox.RunHelper.
//
// Fair shares: at most MaxHelpers helpers run at once for all agents
// together and MaxPerClient for one client; a read that finds no free
// slot waits for one, under its call's context, up to QueueWait, and is
// then refused with a sentence (unavailable). The file is read into
// memory only once the read holds its slot, so the daemon holds at most
// MaxHelpers documents (each at most MaxDocumentBytes) at any moment.
// With the default limits one agent's helpers use at most
// 2 × (docMemory + the input) ≈ 1.7 GiB however many reads it starts;
// all agents' together at most MaxHelpers × 0.85 GiB, where MaxHelpers is
// at least twice the per-agent limit so that one agent never holds every
// helper.
type Config struct {
	Runner  *execbox.Runner   // nil: documents unavailable
	Binary  string            // Corral's own executable
	Args    []string          // e.g. ["__docread"]
	Env     map[string]string // added to the helper's environment
	Timeout time.Duration     // wall time per document; 0 = 30 s
	Limits  execbox.HelperLimits

	MaxHelpers   int           // helpers at once, all agents; 0: NumCPU, at least 4 and at most 8
	MaxPerClient int           // helpers at once for one client; 0: 2
	QueueWait    time.Duration // how long a read waits for a free slot; 0: 60 s
}

// DocumentReadArgs are file.document_read's parameters.
type DocumentReadArgs struct {
	Context *sandbox.Context
	Reason  string // why, in the agent's words; shown if the owner is asked
	Path    string
	Offset  int
	Limit   int
}

// DocumentResult is file.document_read's answer: the document's text,
// paged by lines like file.read. Pages counts PDF pages, spreadsheet
// sheets, slides or EPUB chapters, and is left out for other formats.
type DocumentResult struct {
	Type        string // "document"
	Path        string
	Format      string
	Content     string
	TotalLines  int
	OutputLines int
	Truncated   bool
	TruncatedBy *string
	Pages       int
}

// Helper limits for documents, where Config leaves them zero.
const (
	docTimeout = 30 * time.Second
	docCPU     = 20 * time.Second
	docMemory  = 768 << 20
	docAS      = 3 << 30
	// docOutput is what the helper may print: the text cap plus the header.
	docOutput = 32<<20 + 64<<10

	docPerClient = 2
	docQueueWait = 60 * time.Second
)

var docWords = slots.Words{
	Cancelled: "The document read was cancelled while it waited for a free document reader.",
	Mine:      "%s already reads %d documents at once, its limit; this one waited %s for one of them to finish and was not read. Try again when one has finished.",
	Full:      "Corral already reads %d documents at once, its limit for all agents together; this one waited %s and was not read. Try again shortly.",
}

// newDocSlots bounds the document helpers as dc says (with its defaults).
func newDocSlots(dc Config) *slots.Slots {
	total := dc.MaxHelpers
	if total <= 0 {
		total = max(2*docPerClient, min(runtime.NumCPU(), 8))
	}
	per := dc.MaxPerClient
	if per <= 0 {
		per = docPerClient
	}
	wait := dc.QueueWait
	if wait <= 0 {
		wait = docQueueWait
	}
	return slots.New(total, per, wait, docWords)
}

var extRe = regexp.MustCompile(`^\.[a-z0-9]{1,10}$`)

// Service reads documents over a sandbox.
type Service struct {
	box   *sandbox.Sandbox
	dc    Config
	slots *slots.Slots // bounds document helpers running at once (Config)
	log   *slog.Logger
}

// New returns the document service over box, configured by dc.
func New(box *sandbox.Sandbox, dc Config) *Service {
	return &Service{box: box, dc: dc, slots: newDocSlots(dc), log: box.Logger()}
}

// DocumentRead answers file.document_read: the file is read here, through
// fsbox, and its bytes are parsed by the sandboxed helper, which never
// opens a path.
func (s *Service) DocumentRead(ctx context.Context, c sandbox.Caller, a DocumentReadArgs) (DocumentResult, error) {
	o, err := s.box.BeginOn(ctx, c, a.Context, "file.document_read", a.Reason, a.Path)
	if err != nil {
		return DocumentResult{}, err
	}
	ev := o.Event()
	if a.Offset < 0 || a.Limit < 0 {
		ev.Target = a.Path
		return DocumentResult{}, o.End(errs.New(errs.InvalidParams, a.Path, "offset and limit must not be negative."))
	}
	d, t, err := o.Target(a.Path, policy.Read)
	if err != nil {
		return DocumentResult{}, o.End(err)
	}
	// The slot first: the file is held in memory only while its helper
	// may run.
	release, err := s.slots.Acquire(ctx, ev.Client)
	if err != nil {
		return DocumentResult{}, o.End(err)
	}
	if err := o.StillMay(policy.Read); err != nil {
		release()
		return DocumentResult{}, o.End(err)
	}
	data, err := d.ReadAll(t.RelSlash(), MaxDocumentBytes)
	if err != nil {
		release()
		return DocumentResult{}, o.End(err)
	}
	ev.Bytes = int64(len(data))
	doc, err := s.parseDocument(ctx, t.Visible, data)
	release()
	if err != nil {
		return DocumentResult{}, o.End(err)
	}
	res, err := pageLines(t.Visible, doc.Text, a.Offset, a.Limit)
	if err != nil {
		return DocumentResult{}, o.End(err)
	}
	res.Format, res.Pages = string(doc.Format), doc.Parts
	o.AddDetail(fmt.Sprintf("%s, %d of %d lines", doc.Format, res.OutputLines, res.TotalLines))
	return res, o.End(nil)
}

// parseDocument runs the helper on data and reads its reply.
func (s *Service) parseDocument(ctx context.Context, visible string, data []byte) (docread.Result, error) {
	dc := s.dc
	if dc.Runner == nil || dc.Binary == "" {
		return docread.Result{}, errs.New(errs.Unavailable, visible, "Documents cannot be read: Corral has no sandbox for its document reader.")
	}
	if ok, _, why := dc.Runner.Available(); !ok {
		return docread.Result{}, errs.New(errs.Unavailable, visible, "Documents cannot be read, because they are only ever parsed in a sandbox. %s", strings.TrimPrefix(why, "Commands are unavailable: "))
	}
	args := append([]string(nil), dc.Args...)
	if ext := strings.ToLower(path.Ext(visible)); extRe.MatchString(ext) {
		args = append(args, "doc"+ext)
	} else {
		args = append(args, "doc")
	}
	env := map[string]string{"GOMAXPROCS": "2", "GOMEMLIMIT": "512MiB", "GOTRACEBACK": "none"}
	maps.Copy(env, dc.Env)
	timeout := dc.Timeout
	if timeout <= 0 {
		timeout = docTimeout
	}
	lim := dc.Limits
	if lim.CPUTime <= 0 {
		lim.CPUTime = docCPU
	}
	if lim.Memory <= 0 {
		lim.Memory = docMemory
	}
	if lim.AddressSpace <= 0 {
		lim.AddressSpace = docAS
	}
	res, err := dc.Runner.RunHelper(ctx, execbox.HelperSpec{
		Binary: dc.Binary, Args: args, Env: env, Stdin: data,
		Timeout: timeout, MaxOutput: docOutput, Limits: lim,
	})
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			e.Path = visible
			return docread.Result{}, e
		}
		return docread.Result{}, errs.Wrap(err, errs.IO, visible, "The document reader could not be started.")
	}
	switch {
	case res.Cancelled:
		return docread.Result{}, errs.New(errs.IO, visible, "Reading %s was cancelled.", visible)
	case res.TimedOut:
		return docread.Result{}, errs.New(errs.Timeout, visible, "Reading %s took longer than %s, so it was stopped; the document may be damaged or built to be slow.", visible, timeout)
	case res.Signal == "SIGXCPU" || (res.Signal == "SIGKILL" && res.Duration >= lim.CPUTime):
		return docread.Result{}, errs.New(errs.Timeout, visible, "Reading %s needed more than %s of computing time, so it was stopped; the document may be damaged or built to be slow.", visible, lim.CPUTime)
	}
	doc, perr := docread.ParseReply([]byte(res.Stdout))
	if perr == nil && !res.Truncated && res.ExitCode == 0 {
		return doc, nil
	}
	var de *docread.Error
	if errors.As(perr, &de) && res.ExitCode == 0 {
		if de.Reason == docread.Unsupported {
			return docread.Result{}, errs.New(errs.InvalidParams, visible, "%s is not a document Corral can read; it reads %s.", visible, docread.Names)
		}
		return docread.Result{}, errs.Wrap(perr, errs.IO, visible, "%s", de.Msg)
	}
	// The helper died before it could answer.
	s.log.Warn("document reader failed", "path", visible, "exit", res.ExitCode, "signal", res.Signal, "err", firstLineOf(res.Stderr))
	if strings.Contains(res.Stderr, "out of memory") || res.Signal == "SIGKILL" || res.Signal == "SIGSEGV" {
		return docread.Result{}, errs.New(errs.IO, visible, "The document could not be read: it needs more memory than Corral allows for one document.")
	}
	return docread.Result{}, errs.New(errs.IO, visible, "The document could not be read: it looks damaged.")
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l[:min(len(l), 200)]
}

// pageLines cuts text like file.read cuts a file: from line offset
// (1-based), at most limit lines (and never more than fsbox.MaxReadLines
// lines or fsbox.MaxReadBytes bytes).
func pageLines(visible, text string, offset, limit int) (DocumentResult, error) {
	if offset == 0 {
		offset = 1
	}
	maxLines := fsbox.MaxReadLines
	if limit > 0 && limit < maxLines {
		maxLines = limit
	}
	total := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		total++
	}
	if offset > 1 && offset > total {
		lines := "lines"
		if total == 1 {
			lines = "line"
		}
		return DocumentResult{}, errs.New(errs.InvalidParams, visible, "The text of %s has %d %s, so there is no line %d to start from.", visible, total, lines, offset)
	}
	// Skip to the offset.
	rest := text
	for i := 1; i < offset; i++ {
		_, rest, _ = strings.Cut(rest, "\n")
	}
	var (
		end   int
		n     int
		by    string
		start = rest
	)
	for end < len(start) {
		if n == maxLines {
			by = fsbox.ByLines
			break
		}
		next := strings.IndexByte(start[end:], '\n')
		lineEnd := len(start)
		if next >= 0 {
			lineEnd = end + next + 1
		}
		if lineEnd > fsbox.MaxReadBytes {
			by = fsbox.ByBytes
			if n == 0 { // one line alone is over the cap: its start
				end = fsbox.MaxReadBytes
				for end > 0 && !utf8RuneStart(start[end]) {
					end--
				}
				n = 1
			}
			break
		}
		end = lineEnd
		n++
	}
	res := DocumentResult{Type: "document", Path: visible, Content: start[:end], TotalLines: total, OutputLines: n, Truncated: by != ""}
	if by != "" {
		res.TruncatedBy = &by
	}
	return res, nil
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
