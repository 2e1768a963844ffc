"""Editor writes, one module per concern.

- permissions: who may edit, read revisions, break locks; the REST binding-write check.
- documents: the editor document of an agent, its validation, merge and storage.
- locks: edit lock sessions (take, renew, release, break) and the guard every write passes.
- revisions: the versioned commit every editor write goes through, and the saves, resets
  and restores built on it.

Import the module you need (`from agents_core.editor.services import locks`); this package
re-exports nothing, so its modules import each other without a cycle.
"""
