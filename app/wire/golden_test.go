package wire

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"corral/app/rpc"
	"corral/core/applypatch"
	"corral/core/audit"
	"corral/core/commands"
	"corral/core/documents"
	"corral/core/errs"
	"corral/core/fsbox"
	"corral/core/links"
	"corral/core/netgate"
	"corral/core/policy"
	"corral/core/sandbox"
	"corral/core/undo"
	"corral/core/versions"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// TestGolden pins the JSON Corral accepts and answers for every method
// whose parameters or result are core types: what each params object
// decodes to (or the error it gets), and the exact bytes of
// representative results, full, empty and with omitempty fields unset.
// It was recorded before the JSON tags left core and must not change.
func TestGolden(t *testing.T) {
	var b strings.Builder
	for _, e := range goldenParams() {
		fmt.Fprintf(&b, "params %s %s\n  -> %s\n", e.method, e.raw, e.got)
	}
	for _, e := range goldenResults() {
		fmt.Fprintf(&b, "result %s\n  -> %s\n", e.method, e.got)
	}
	const file = "testdata/golden.txt"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		got, wantLines := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(got), len(wantLines)) {
			if got[i] != wantLines[i] {
				t.Fatalf("line %d differs:\n got: %s\nwant: %s", i+1, got[i], wantLines[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(got), len(wantLines))
	}
}

type golden struct{ method, raw, got string }

// decoded decodes each raw params object as method's A and shows the
// value it became, field by field, or the error.
func decoded[A any](method string, raws ...string) []golden {
	var out []golden
	for _, raw := range raws {
		a, err := Decode[A]([]byte(raw))
		got := dump(reflect.ValueOf(a))
		if err != nil {
			got = fmt.Sprintf("error %s: %s", errs.KindOf(err), err)
		}
		out = append(out, golden{method, raw, got})
	}
	return out
}

// commonCtx are the params cases every method with a context shares.
const ctxAll = `"context":{"session_id":"s","user_id":"u","app_id":"a","channel_name":"c","conversation_type":"t"}`

func goldenParams() []golden {
	var g []golden
	add := func(gs []golden) { g = append(g, gs...) }
	add(decoded[sandbox.ReadArgs]("file.read", `{"path":"a.txt"}`, `{`+ctxAll+`,"reason":"r","path":"a.txt","offset":2,"limit":3,"encoding":"base64"}`,
		`{}`, `null`, `{"path":null}`, `{"path":""}`, `{"path":1}`, `{"path":"a","bogus":1}`, `{"PATH":"a"}`, `{"path":"a","context":null}`, `{"path":"a","context":{}}`,
		`{"path":"a","tail":5}`, `{"path":"a","encoding":"base64","byte_offset":9}`))
	add(decoded[sandbox.WriteArgs]("file.write", `{"path":"a","content":""}`, `{`+ctxAll+`,"reason":"r","path":"a","content":"x","append":true,"encoding":"base64"}`, `{"path":"a"}`, `{"content":"x"}`))
	add(decoded[sandbox.EditArgs]("file.edit", `{"path":"a","old_text":"","new_text":"n"}`,
		`{`+ctxAll+`,"reason":"r","path":"a","old_text":"o","new_text":"n","replace_all":true,"edits":[{"old_text":"a","new_text":"b","replace_all":true},{"old_text":"c","new_text":"d"}],"dry_run":true}`,
		`{"path":"a","edits":[]}`, `{"path":"a","edits":[{"old":"x"}]}`, `{"path":"a","edits":{}}`))
	add(decoded[applypatch.PatchArgs]("file.apply_patch", `{"patch":"p"}`, `{`+ctxAll+`,"reason":"r","patch":"p","dry_run":true}`, `{}`))
	add(decoded[sandbox.DeleteArgs]("file.delete", `{"path":"a"}`, `{`+ctxAll+`,"reason":"r","path":"a","recursive":true}`, `{"recursive":"yes","path":"a"}`))
	add(decoded[sandbox.MoveArgs]("file.move", `{"from":"a","to":"b"}`, `{`+ctxAll+`,"reason":"r","from":"a","to":"b"}`, `{"from":"a"}`, `{"to":"b"}`))
	add(decoded[sandbox.StatArgs]("file.stat", `{"path":"a"}`, `{`+ctxAll+`,"reason":"r","path":"a"}`, `{"path":["a"]}`))
	add(decoded[sandbox.ListArgs]("folder.list", `{}`, `{`+ctxAll+`,"reason":"r","path":"a","depth":5}`, `{"depth":1.5}`))
	add(decoded[sandbox.FolderArgs]("folder.create", `{"path":"a"}`, `{`+ctxAll+`,"reason":"r","path":"a"}`, `{}`))
	add(decoded[sandbox.FindArgs]("file.find", `{"pattern":"*"}`, `{`+ctxAll+`,"reason":"r","pattern":"*","path":"a"}`, `{"path":"a"}`))
	add(decoded[sandbox.GrepArgs]("file.grep", `{"pattern":"x"}`, `{`+ctxAll+`,"reason":"r","pattern":"x","path":"a","glob":"*.go","max_matches":7}`, `{"pattern":"x","max_matches":"7"}`))
	add(decoded[documents.DocumentReadArgs]("file.document_read", `{"path":"a.pdf"}`, `{`+ctxAll+`,"reason":"r","path":"a.pdf","offset":1,"limit":2}`, `{}`))
	add(decoded[commands.RunArgs]("command.run", `{"command":"ls"}`,
		`{`+ctxAll+`,"command":"ls","working_dir":"w","network":true,"allowed_domains":["a.example"],"package_managers":["pip"],"timeout_ms":5,"env":{"A":"1","B":""},"stdin":"in","stream":true,"reason":"r"}`,
		`{}`, `{"command":"ls","env":{"A":1}}`, `{"command":"ls","allowed_domains":"a"}`))
	add(decoded[links.ResultArgs]("result.save", `{"title":"t","content":"c"}`, `{`+ctxAll+`,"title":"t","content":"c","format":"html"}`, `{"title":"t"}`))
	add(decoded[undo.HistoryArgs]("versions.list", `{"path":"a"}`, `{`+ctxAll+`,"path":"a","limit":3}`, `{}`))
	add(decoded[undo.ChangesArgs]("changes.get", `{"event_id":7}`, `{}`, `{"event_id":"7"}`))
	add(decoded[undo.UndoArgs]("undo.preview", `{"event_id":7}`, `{"event_id":7,"skip_conflicts":true}`, `{}`))
	add(decoded[undo.RestoreArgs]("version.restore", `{"path":"a","version":"v"}`, `{`+ctxAll+`,"path":"a","version":"v"}`, `{"path":"a"}`))
	add(decoded[undo.UndoClientArgs]("undo.client", `{"client":"c","since":"2026-01-02T03:04:05Z"}`,
		`{"client":"c","since":"2026-01-02T03:04:05Z","until":"2026-01-03T03:04:05+01:00","dry_run":true,"skip_conflicts":true}`,
		`{"client":"c"}`, `{"client":"c","since":"yesterday"}`))
	add(decoded[struct{}]("versions.usage", `{}`, `{"x":1}`))
	return g
}

func goldenResults() []golden {
	when := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	sig := "SIGKILL"
	results := []struct {
		name string
		v    any
	}{
		{"file.read text", fsbox.ReadResult{Type: "text", Path: "a.txt", Bytes: 12, Content: "a\nb\n", TotalLines: 9, OutputLines: 2, Truncated: true, TruncatedBy: fsbox.ByLines, Encoding: "windows-1252"}},
		{"file.read text untruncated", fsbox.ReadResult{Type: "text", Path: "a.txt"}},
		{"file.read image", fsbox.ReadResult{Type: "image", Path: "a.png", Bytes: 3, MimeType: "image/png", Data: []byte{1, 2, 3}}},
		{"file.read binary", fsbox.ReadResult{Type: "binary", Path: "a.bin", Bytes: 10, Encoding: "base64", Data: []byte("<&>"), Offset: 4, Truncated: true}},
		{"file.read binary empty", fsbox.ReadResult{Type: "binary", Path: "a.bin", Encoding: "base64"}},
		{"file.write", sandbox.WriteResult{Path: "a", Bytes: 3}},
		{"file.edit", sandbox.EditResult{Path: "a", Replacements: 2, Diff: "--- a\n+++ a\n", DiffTruncated: true, DryRun: true}},
		{"file.edit plain", sandbox.EditResult{Path: "a"}},
		{"file.apply_patch", applypatch.PatchResult{Files: []applypatch.PatchFile{{Path: "b", Action: "move", From: "a", Hunks: 1, Offsets: []int{0, 2}}, {Path: "c", Action: "add"}}, DryRun: true}},
		{"file.apply_patch empty", applypatch.PatchResult{}},
		{"file.delete", sandbox.PathResult{Path: "a"}},
		{"file.move", sandbox.MoveResult{From: "a", To: "b"}},
		{"file.stat", fsbox.Info{Name: "a", Path: "d/a", Type: "file", Size: 4, Modified: when}},
		{"folder.list", sandbox.ListResult{Path: "d", Entries: []fsbox.Info{{Name: "a", Path: "d/a", Type: "dir", Modified: when}}, Truncated: true}},
		{"folder.list empty", sandbox.ListResult{Path: "d", Entries: []fsbox.Info{}}},
		{"folder.list nil", sandbox.ListResult{}},
		{"folder.create", sandbox.FolderResult{Path: "a", Created: true}},
		{"file.find", sandbox.FindResult{Matches: []string{"a", "b"}, Truncated: true}},
		{"file.find nil", sandbox.FindResult{}},
		{"file.grep", sandbox.GrepResult{Matches: []fsbox.Match{{Path: "a", Line: 3, Text: "x <y>"}}}},
		{"file.grep nil", sandbox.GrepResult{}},
		{"file.document_read", documents.DocumentResult{Type: "document", Path: "a.pdf", Format: "pdf", Content: "c", TotalLines: 3, OutputLines: 1, Truncated: true, TruncatedBy: &sig, Pages: 2}},
		{"file.document_read plain", documents.DocumentResult{Type: "document"}},
		{"command.run", commands.RunResult{ExitCode: -1, Signal: &sig, Stdout: "o", Stderr: "e", Truncated: true, TimedOut: true, Cancelled: true, DurationMs: 9,
			Network:          &netgate.Summary{Connections: 2, Allowed: []string{"a.example:443"}, Refused: []netgate.Refusal{{Target: "b:80", Reason: "no"}}, BytesUp: 1, BytesDown: 2},
			Changes:          []commands.FileChange{{Path: "a", Kind: audit.Created}},
			ChangesTruncated: true}},
		{"command.run plain", commands.RunResult{}},
		{"command.run empty", commands.RunResult{Network: &netgate.Summary{}, Changes: []commands.FileChange{}}},
		{"command.run not applied", commands.RunResult{Changes: []commands.FileChange{}, NotApplied: &commands.NotApplied{Kind: errs.Unavailable, Message: "m", Paths: []string{"a"}, Count: 2}}},
		{"command.list", []commands.Running{{RequestID: "1", Client: "c", Scope: "s", Command: "ls", Started: when}}},
		{"versions.list", undo.HistoryResult{Path: "a", Versions: []undo.Version{{EventID: 1, Time: when, Client: "c", Op: "file.write", Kind: "modified", Version: "v", Size: 3, Mode: 0o644, NotKept: "too_large", Kept: true}, {}}}},
		{"versions.list nil", undo.HistoryResult{}},
		{"versions.usage", versions.Usage{Bytes: 1, Blobs: 2, MaxBytes: 3, MaxAge: "720h0m0s", MaxFile: 4, Oldest: when}},
		{"versions.usage agents", versions.Usage{Bytes: 1, AgentShare: 5, Agents: []versions.AgentUsage{{Client: "a", Bytes: 6, Blobs: 7, Oldest: when, Refused: 8}, {Client: "owner"}}}},
		{"versions.usage empty", versions.Usage{}},
		{"versions.forget", undo.ForgetResult{Client: "a", Versions: 2, Bytes: 3}},
		{"changes.get", undo.ChangesResult{Event: audit.Event{ID: 3, Time: when, Client: "c", Op: "file.write", Decision: audit.Allow}, Changes: []audit.Change{{Path: "a", Kind: audit.Modified, SizeBefore: 1, SizeAfter: 2, Version: "v"}}}},
		{"changes.get nil", undo.ChangesResult{}},
		{"undo.preview", undo.UndoResult{EventID: 3, Op: "file.write", Client: "c", User: "u", Time: when, Conflicts: 1, Applied: true, UndoEvent: 4,
			Files: []undo.UndoFile{{Path: "a", Action: "move_back", From: "b", Kind: "moved", Conflict: "changed since", SizeNow: 1, SizeAfter: 2, Binary: true, Diff: "d", Version: "v"}, {Path: "c", Action: "none"}}}},
		{"undo.preview plain", undo.UndoResult{}},
		{"undo.client", undo.UndoClientResult{Events: []undo.UndoResult{{EventID: 1}}, Conflicts: 2, Applied: true, DryRun: true}},
		{"undo.client nil", undo.UndoClientResult{}},
		{"package_managers", netgate.Bundles()[:1]},
		{"audit.query", audit.Page{NextCursor: "c", Events: []audit.Event{{ID: 1, Time: when, Client: "c", User: "u", Op: "file.move", Target: "t", Decision: audit.Deny, DecidedBy: audit.ByRule, Detail: "d", Bytes: 2, DurationMs: 3, Error: "e", Answer: "allow_always", AnsweredBy: "cli", Rule: "r1",
			Changes: []audit.Change{{Path: "b", Kind: audit.Moved, From: "a", SizeBefore: 1, SizeAfter: 2, Version: "v", After: "w", Mode: 0o755, Link: "l", NotKept: "too_large", Dir: true}, {Path: "c", Kind: audit.Created}}}}}},
		{"audit.query empty", audit.Page{Events: []audit.Event{}}},
		{"audit.query event", audit.Event{}},
		{"audit.query change", audit.Change{}},
		{"approval.list", policy.Approval{ID: "a", Client: "c", User: "u", Access: policy.Write, Target: "t", Reason: "r", OneTimeOnly: true, RequestedAt: when, ExpiresAt: when.Add(time.Minute), Description: "d", Folder: "f", Domain: "x.example", Command: "curl", Sensitive: "ssh keys", Asked: "l", Preview: "p"}},
		{"approval.list plain", policy.Approval{}},
		{"approval.list choices", policy.Approval{}.Choices()},
		{"rule.list", []policy.Rule{{ID: "r", Client: "*", User: "u", Access: policy.Read, Target: "t", Match: policy.Prefix, Decision: policy.EffectAllow, Lifetime: policy.Always, Created: when, CreatedBy: "owner", Expires: &when, Description: "d"}, {}}},
		{"audit.stats", []audit.Bucket{{Start: when, Allow: 1, Deny: 2, Error: 3}, {}}},
	}
	var out []golden
	for _, r := range results {
		b, err := rpc.Marshal(Encode(r.v))
		got := strings.TrimSuffix(string(b), "\n")
		if err != nil {
			got = "error " + err.Error()
		}
		out = append(out, golden{method: r.name, got: got})
	}
	return out
}

// dump shows v with Go field names, following pointers, so that the
// same value shows the same however it is tagged.
func dump(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Invalid:
		return "invalid"
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return "&" + dump(v.Elem())
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			return t.Format(time.RFC3339Nano)
		}
		var parts []string
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				parts = append(parts, v.Type().Field(i).Name+":"+dump(v.Field(i)))
			}
		}
		return "{" + strings.Join(parts, " ") + "}"
	case reflect.Slice:
		if v.IsNil() {
			return "nil"
		}
		var parts []string
		for i := range v.Len() {
			parts = append(parts, dump(v.Index(i)))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.Map:
		if v.IsNil() {
			return "nil"
		}
		var parts []string
		for _, k := range v.MapKeys() {
			parts = append(parts, dump(k)+":"+dump(v.MapIndex(k)))
		}
		sort.Strings(parts)
		return "map[" + strings.Join(parts, " ") + "]"
	case reflect.String:
		return fmt.Sprintf("%q", v.String())
	default:
		return fmt.Sprint(v.Interface())
	}
}
