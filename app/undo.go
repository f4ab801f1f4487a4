package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"

	"corral/app/client"
	"corral/app/wire"
)

// runUndo is `corral undo EVENT_ID [--dry-run] [--skip-conflicts]`: it
// shows what undoing the event changes (files, a short diff for text,
// sizes for binary files) and, unless --dry-run, undoes it.
func runUndo(args []string) error {
	fs := flag.NewFlagSet("undo", flag.ContinueOnError)
	dry := fs.Bool("dry-run", false, "only show what the undo would change")
	skip := fs.Bool("skip-conflicts", false, "undo what can be undone and leave files that changed again since as they are")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	var id int64
	if len(pos) == 1 {
		id, _ = strconv.ParseInt(pos[0], 10, 64)
	}
	if id <= 0 {
		return errors.New("usage: corral undo EVENT_ID [--dry-run] [--skip-conflicts]")
	}
	return withDaemon(func(ctx context.Context, c *client.Client) error {
		var pre wire.UndoResult
		if err := call(ctx, c, "undo.preview", wire.UndoArgs{EventID: id}, &pre); err != nil {
			return err
		}
		printUndo(pre)
		if *dry {
			return nil
		}
		var r wire.UndoResult
		if err := call(ctx, c, "undo.apply", wire.UndoArgs{EventID: id, SkipConflicts: *skip}, &r); err != nil {
			return err
		}
		fmt.Printf("Undone (event %d; `corral undo %d` puts it back).\n", r.UndoEvent, r.UndoEvent)
		return nil
	})
}

func printUndo(r wire.UndoResult) {
	fmt.Printf("Event %d: %s by %s changed %d files.\n", r.EventID, r.Op, r.Client, len(r.Files))
	for _, f := range r.Files {
		what := map[string]string{"restore": "restore", "remove": "remove", "move_back": "move back to " + f.From, "none": "already as it was"}[f.Action]
		fmt.Printf("  %s: %s (%s)", f.Path, what, f.Kind)
		if f.Binary {
			fmt.Printf(", %d bytes now, %d after", f.SizeNow, f.SizeAfter)
		}
		fmt.Println()
		if f.Conflict != "" {
			fmt.Printf("    CONFLICT: %s\n", f.Conflict)
		}
		if f.Diff != "" {
			os.Stdout.WriteString(indent(f.Diff))
		}
	}
}

func indent(s string) string {
	out := make([]byte, 0, len(s)+len(s)/8)
	start := true
	for i := 0; i < len(s); i++ {
		if start {
			out = append(out, "    "...)
		}
		out = append(out, s[i])
		start = s[i] == '\n'
	}
	return string(out)
}
