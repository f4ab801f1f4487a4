package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"corral/core/errs"
)

// Rules as a file (rule.export, rule.import): JSON, versioned, one entry
// per rule in the words the owner writes them in.
//
//	{"corral_rules": 1, "rules": [
//	  {"agent": "alice-bot", "folder": "alice", "access": "network",
//	   "target": "*.example.com", "decision": "allow", "note": "docs"}
//	]}
//
// Only lasting rules travel: those that last until Corral restarts and
// those expired stay behind.

// RulesFileVersion is the version export writes and import reads.
const RulesFileVersion = 1

// MaxImportBytes and MaxImportRules bound a file to import.
const (
	MaxImportBytes = 1 << 20
	MaxImportRules = 2000
)

// fileRule is one entry of a rules file.
type fileRule struct {
	Agent    string     `json:"agent"`
	Folder   string     `json:"folder"`
	Access   Access     `json:"access"`
	Target   string     `json:"target"`
	Whole    bool       `json:"whole_folder,omitempty"`
	Decision Effect     `json:"decision"`
	Expires  *time.Time `json:"expires,omitempty"`
	Note     string     `json:"note,omitempty"`
}

type rulesFile struct {
	Version int        `json:"corral_rules"`
	Rules   []fileRule `json:"rules"`
}

// ExportRules writes the lasting rules in force as a rules file.
func (p *Policy) ExportRules() []byte {
	f := rulesFile{Version: RulesFileVersion, Rules: []fileRule{}}
	for _, r := range p.Rules() {
		if r.Lifetime != Always {
			continue
		}
		f.Rules = append(f.Rules, fileRule{Agent: r.Client, Folder: r.User, Access: r.Access, Target: r.Target,
			Whole: r.Match == Prefix && r.Access != Execute, Decision: r.Decision, Expires: r.Expires, Note: r.Note})
	}
	b, _ := json.MarshalIndent(f, "", "  ")
	return append(b, '\n')
}

// ImportEntry is one rule read from a rules file: its draft and where it
// was (its number from 1, and the line it starts on).
type ImportEntry struct {
	Draft
	Entry, Line int
}

// ParseRulesFile reads a rules file strictly: the version must be one
// this Corral knows, unknown fields are refused, and a fault names its
// line (and entry). It checks the form only; ImportRules checks each rule.
func ParseRulesFile(data []byte) ([]ImportEntry, error) {
	bad := func(off int64, entry int, format string, args ...any) error {
		where := fmt.Sprintf("Line %d", lineAt(data, off))
		if entry > 0 {
			where = fmt.Sprintf("Entry %d (line %d)", entry, lineAt(data, off))
		}
		return errs.New(errs.InvalidParams, "", "%s: %s Nothing was imported.", where, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxImportBytes {
		return nil, errs.New(errs.TooLarge, "", "A rules file has at most %d bytes; nothing was imported.", MaxImportBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, bad(dec.InputOffset(), 0, "this is not a Corral rules file (it should start with {\"corral_rules\": %d).", RulesFileVersion)
	}
	version, sawRules := 0, false
	var out []ImportEntry
	for dec.More() {
		off := dec.InputOffset()
		t, err := dec.Token()
		if err != nil {
			return nil, bad(off, 0, "%s", jsonProblem(err))
		}
		key, _ := t.(string)
		switch key {
		case "corral_rules":
			if err := dec.Decode(&version); err != nil {
				return nil, bad(off, 0, "corral_rules must be a version number.")
			}
			if version != RulesFileVersion {
				return nil, bad(off, 0, "this rules file has version %d; this Corral reads version %d.", version, RulesFileVersion)
			}
		case "rules":
			if sawRules {
				return nil, bad(off, 0, "\"rules\" is given twice.")
			}
			sawRules = true
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return nil, bad(off, 0, "\"rules\" must be a list.")
			}
			for dec.More() {
				if len(out) == MaxImportRules {
					return nil, bad(dec.InputOffset(), len(out)+1, "a rules file holds at most %d rules.", MaxImportRules)
				}
				start := skipSpace(data, dec.InputOffset())
				var fr fileRule
				if err := dec.Decode(&fr); err != nil {
					return nil, bad(start, len(out)+1, "%s", jsonProblem(err))
				}
				out = append(out, ImportEntry{Entry: len(out) + 1, Line: lineAt(data, start), Draft: Draft{
					Client: fr.Agent, User: fr.Folder, Access: fr.Access, Target: fr.Target, Folder: fr.Whole,
					Decision: fr.Decision, Expires: fr.Expires, Note: fr.Note}})
			}
			if _, err := dec.Token(); err != nil {
				return nil, bad(dec.InputOffset(), 0, "%s", jsonProblem(err))
			}
		default:
			return nil, bad(off, 0, "unknown field %q.", key)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(dec.InputOffset(), 0, "%s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad(dec.InputOffset(), 0, "there is more after the end of the rules file.")
	}
	if version == 0 {
		return nil, bad(0, 0, "this is not a Corral rules file: \"corral_rules\": %d is missing.", RulesFileVersion)
	}
	if !sawRules {
		return nil, bad(0, 0, "the file has no \"rules\" list.")
	}
	return out, nil
}

// jsonProblem is a JSON decoding error in a sentence.
func jsonProblem(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if ute.Field != "" {
			return fmt.Sprintf("%q has the wrong type (%s).", ute.Field, ute.Value)
		}
		return fmt.Sprintf("a value has the wrong type (%s).", ute.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "the JSON is malformed (" + se.Error() + ")."
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the file ends too early."
	}
	var te *time.ParseError
	if errors.As(err, &te) {
		return "\"expires\" must be a time such as 2026-12-31T18:00:00Z."
	}
	return err.Error() + "."
}

// lineAt is the line (from 1) of byte off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// skipSpace returns the offset of the first byte from off that is
// neither space nor a comma: where the next value starts.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
		off++
	}
	return off
}
