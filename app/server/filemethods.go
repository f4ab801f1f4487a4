package server

import (
	"context"

	"corral/core/applypatch"
	"corral/core/documents"
	"corral/core/fsbox"
	"corral/core/sandbox"
	"corral/core/undo"
	"corral/core/versions"
)

// fileOps is what the file methods use of the sandbox: its file and
// folder operations, each already checked and recorded there.
type fileOps interface {
	Read(ctx context.Context, c sandbox.Caller, a sandbox.ReadArgs) (fsbox.ReadResult, error)
	Write(ctx context.Context, c sandbox.Caller, a sandbox.WriteArgs) (sandbox.WriteResult, error)
	Edit(ctx context.Context, c sandbox.Caller, a sandbox.EditArgs) (sandbox.EditResult, error)
	Delete(ctx context.Context, c sandbox.Caller, a sandbox.DeleteArgs) (sandbox.PathResult, error)
	Move(ctx context.Context, c sandbox.Caller, a sandbox.MoveArgs) (sandbox.MoveResult, error)
	Stat(ctx context.Context, c sandbox.Caller, a sandbox.StatArgs) (fsbox.Info, error)
	List(ctx context.Context, c sandbox.Caller, a sandbox.ListArgs) (sandbox.ListResult, error)
	CreateFolder(ctx context.Context, c sandbox.Caller, a sandbox.FolderArgs) (sandbox.FolderResult, error)
	Find(ctx context.Context, c sandbox.Caller, a sandbox.FindArgs) (sandbox.FindResult, error)
	Grep(ctx context.Context, c sandbox.Caller, a sandbox.GrepArgs) (sandbox.GrepResult, error)
}

// patchOps is what file.apply_patch uses of core/applypatch.
type patchOps interface {
	ApplyPatch(ctx context.Context, c sandbox.Caller, a applypatch.PatchArgs) (applypatch.PatchResult, error)
}

// docOps is what file.document_read uses of core/documents.
type docOps interface {
	DocumentRead(ctx context.Context, c sandbox.Caller, a documents.DocumentReadArgs) (documents.DocumentResult, error)
}

// undoOps is what the owner's versions and undo methods use of
// core/undo, each already checked and recorded there.
type undoOps interface {
	History(ctx context.Context, c sandbox.Caller, a undo.HistoryArgs) (undo.HistoryResult, error)
	VersionsInfo(ctx context.Context, c sandbox.Caller, _ struct{}) (versions.Usage, error)
	Changes(ctx context.Context, c sandbox.Caller, a undo.ChangesArgs) (undo.ChangesResult, error)
	UndoPreview(ctx context.Context, c sandbox.Caller, a undo.UndoArgs) (undo.UndoResult, error)
	UndoApply(ctx context.Context, c sandbox.Caller, a undo.UndoArgs) (undo.UndoResult, error)
	UndoClient(ctx context.Context, c sandbox.Caller, a undo.UndoClientArgs) (undo.UndoClientResult, error)
	Restore(ctx context.Context, c sandbox.Caller, a undo.RestoreArgs) (undo.UndoResult, error)
	ForgetVersions(ctx context.Context, c sandbox.Caller, a undo.ForgetArgs) (undo.ForgetResult, error)
}

// fileArea answers the file and folder methods, and the owner's versions
// and undo methods (core/undo; docs/undo.md).
type fileArea struct {
	box     fileOps
	patches patchOps
	docs    docOps
	undo    undoOps
}

func (x fileArea) methods(add func(name string, m method)) {
	b := x.box
	add("file.read", method{fn: handle(b.Read)})
	add("file.write", method{fn: handle(b.Write)})
	add("file.edit", method{fn: handle(b.Edit)})
	add("file.apply_patch", method{fn: handle(x.patches.ApplyPatch)})
	add("file.delete", method{fn: handle(b.Delete)})
	add("file.move", method{fn: handle(b.Move)})
	add("file.stat", method{fn: handle(b.Stat)})
	add("folder.list", method{fn: handle(b.List)})
	add("folder.create", method{fn: handle(b.CreateFolder)})
	add("file.find", method{fn: handle(b.Find)})
	add("file.grep", method{fn: handle(b.Grep)})
	add("file.document_read", method{fn: handle(x.docs.DocumentRead)}) // an extension: text out of PDF, DOCX, … (docs/protocol.md)

	u := x.undo
	add("versions.list", method{owner: true, fn: handle(u.History)})
	add("versions.usage", method{owner: true, fn: handle(u.VersionsInfo)})
	add("changes.get", method{owner: true, fn: handle(u.Changes)})
	add("undo.preview", method{owner: true, fn: handle(u.UndoPreview)})
	add("undo.apply", method{owner: true, fn: handle(u.UndoApply)})
	add("undo.client", method{owner: true, fn: handle(u.UndoClient)})
	add("version.restore", method{owner: true, fn: handle(u.Restore)})
	add("versions.forget", method{owner: true, fn: handle(u.ForgetVersions)})
}
