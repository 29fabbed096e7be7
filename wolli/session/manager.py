"""SessionManager: one session's entry tree, its leaf, and its file.

Entries form a tree through ``parentId``; the leaf is where the next entry hangs (the last
appended entry unless the user navigates with ``branch``). Labels, the session name and
tags are folded from their entries in file order. A new session is kept in memory until its
first message (the user's prompt, a ``!cmd`` run, an extension's message): then the file is
created with everything so far, before the prompt's request is sent, so a crash while the
answer streams loses no prompt; a session that never got a message leaves no file. From
then on every entry goes straight to disk in one write of a whole line (see ``store``).
User messages are also synced to the disk (``SYNCED_ROLES``): they are the one thing that
cannot be produced again. ``in_memory`` sessions never write at all (``--no-session``).
"""

from __future__ import annotations

import datetime as _dt
import os
import weakref
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.messages import parse_agent_message
from ..ai.types import AssistantMessage, ToolResultMessage
from ..base.ids import uuid4_text
from ..base.records import record
from ..config.paths import cwd_slug, sessions_dir
from . import store, writer_lock
from .context import SessionContext, build_context, interrupted_result
from .context_tail import context_tail, count_older
from .entries import (
    BranchSummaryEntry,
    CheckpointEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    SubagentOrigin,
    TagsEntry,
    ThinkingLevelChangeEntry,
    new_entry_id,
)
from .entry_store import EntryStore
from .lookup import jsonl_in, match_prefix, subagent_files
from .tags import fold_tags

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..agent.messages import AgentMessage
    from .entries import SessionEntry

# Entries that wait for the disk (fdatasync) before the next step: what the user typed. The
# rest (answers, tool results) only survives a killed Wolli, not a power loss; syncing each
# of them would cost a disk flush per entry while streaming (docs/sessions.md, "Crashes").
SYNCED_ROLES = frozenset({"user"})
# Subagents' sessions live in this folder beside their parent's file (out of /resume's list).
SUBAGENT_FOLDER = "subagents"


class SessionLookupError(LookupError):
    """No session, or more than one, matches what the user asked for."""


@record
class SessionTreeNode:
    """One entry of the /tree view, with its children in file order and its label."""

    entry: SessionEntry
    children: list[SessionTreeNode] = field(default_factory=list)
    label: str | None = None


def _file_timestamp() -> str:
    now = _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H-%M-%S-") + f"{now.microsecond // 1000:03d}Z"


def _new_session_path(folder: Path, session_id: str) -> Path:
    return folder / f"{_file_timestamp()}_{session_id}.jsonl"


def _root(session_dir: str | os.PathLike[str] | None) -> Path:
    return Path(session_dir) if session_dir is not None else sessions_dir()



def _recover_beside(session_file: Path) -> list[str]:
    """``checkpoints.restore.recover_beside``, imported only when the folder has a rewind
    journal (the usual start stats one folder and imports nothing: ~4 ms)."""
    if not (session_file.parent / "blobs" / "journal").is_dir():
        return []
    from .checkpoints.restore import recover_beside

    return recover_beside(session_file)

class SessionManager:
    """Owns the entries of one session and appends to its JSONL file."""

    def __init__(self, header: SessionHeader, path: Path | None, *, persisted: bool) -> None:
        self._header = header
        self._path = path
        # False until the file holds the header (new sessions before their first message).
        self._persisted = persisted
        self.load_errors: list[str] = []
        # Every entry by id in file order: objects for the current context and what was
        # appended since opening, line references for the rest (``entry_store``).
        self._store = EntryStore(self.load_errors)
        # The context's entries as the last build_session_context of the leaf found them,
        # with the leaf and entry count they were found at (reused while both hold).
        self._context_cache: tuple[str | None, int, list[Any], list[str]] | None = None
        # parent id -> child ids in file order; built on first use (/tree), not on open.
        self._children: dict[str | None, list[str]] | None = None
        self._labels: dict[str, str] = {}
        self._tags: dict[str, str] = {}
        self._name: str | None = None
        self._leaf_id: str | None = None
        # Set by stop_writing(): the disk refused a write, so the session goes on in memory.
        self._writing_stopped = False
        # The file's writer lock (see writer_lock, claim_writer): its release once held (also
        # run if the manager is dropped without release_writer), and a claim due at creation.
        self._release: weakref.finalize[Any, Any] | None = None
        self._claim_at_flush = False
        # Opened with ``defer_context``: the context is not built yet (``finish_context``).
        self._context_pending = False

    # ------------------------------------------------------------------ constructors

    @classmethod
    def create(
        cls,
        cwd: str,
        session_dir: str | os.PathLike[str] | None = None,
        *,
        parent_session: str | None = None,
        subagent: SubagentOrigin | None = None,
        folder: str | os.PathLike[str] | None = None,
    ) -> SessionManager:
        """A new session in ``<session_dir>/<cwd slug>/`` (or in ``folder``); written at its
        first message."""
        cwd = os.path.abspath(cwd)
        session_id = uuid4_text()
        header = SessionHeader(id=session_id, cwd=cwd, parent_session=parent_session, subagent=subagent)
        where = Path(folder) if folder is not None else _root(session_dir) / cwd_slug(cwd)
        path = _new_session_path(where, session_id)
        _recover_beside(path)  # a rewind of this folder killed midway: finished before anything runs
        return cls(header, path, persisted=False)

    @classmethod
    def in_memory(cls, cwd: str) -> SessionManager:
        """A session that never touches the disk (``--no-session``)."""
        header = SessionHeader(id=uuid4_text(), cwd=os.path.abspath(cwd))
        return cls(header, None, persisted=False)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, cwd: str | None = None, defer_context: bool = False) -> SessionManager:
        """Load a session file. A missing or empty file starts a new session at that path.

        ``defer_context`` indexes the file without building the context: the caller takes
        :meth:`context_tail` first and :meth:`finish_context` later (the TUI's resume)."""
        target = Path(path).expanduser().absolute()
        if not target.exists():
            return cls._fresh_at(target, cwd)
        finished = _recover_beside(target)  # a rewind killed midway: finished before reading
        with store.gc_paused():  # one pause over parsing and indexing (see store.gc_paused)
            loaded = store.load(target, lazy=True)
            if loaded.header is None:
                return cls._fresh_at(target, cwd)
            manager = cls(loaded.header, target, persisted=True)
            manager.load_errors.extend([*loaded.errors, *finished])
            repaired = loaded.migrated_from is not None or loaded.header_rebuilt
            manager._index_loaded(loaded, target, defer_context=defer_context and not repaired)
            if loaded.migrated_from is not None:
                version = loaded.migrated_from
                manager._save_repaired(f"upgraded from format v{version} to v3", f".v{version}")
            elif loaded.header_rebuilt:
                manager._save_repaired("saved with a new session header", ".no-header")
        return manager

    def _save_repaired(self, what: str, backup_suffix: str) -> None:
        """Write a file the loader had to repair back in its repaired form, the original kept
        beside it as ``<file><backup_suffix>``.

        pi's v1/v2 files (``migrate``) got entry ids only now, and a file that lost its header
        line got a new one: later appends must find both in the file. If the disk refuses,
        the session goes on in memory, as after any refused write.
        """
        assert self._path is not None
        lines = [self._header.to_json(), *(entry.to_json() for entry in self._store.entries())]
        backup = f"{self._path}{backup_suffix}"
        try:
            store.rewrite(self._path, lines, keep_original_as=backup)
        except OSError as exc:
            self.load_errors.append(f"{what} in memory only (cannot rewrite the file: {exc})")
            self.stop_writing()
            return
        self.load_errors.append(f"{what}; the original is kept as {backup}")

    @classmethod
    def _fresh_at(cls, target: Path, cwd: str | None) -> SessionManager:
        header = SessionHeader(id=uuid4_text(), cwd=os.path.abspath(cwd or os.getcwd()))
        return cls(header, target, persisted=False)

    @classmethod
    def continue_recent(
        cls, cwd: str, session_dir: str | os.PathLike[str] | None = None, *, defer_context: bool = False
    ) -> SessionManager:
        """The most recently modified session of ``cwd``, or a new one if there is none."""
        folder = _root(session_dir) / cwd_slug(cwd)
        candidates: list[tuple[int, str]] = []
        try:
            with os.scandir(folder) as it:
                for item in it:
                    if item.name.endswith(".jsonl") and item.is_file():
                        candidates.append((item.stat().st_mtime_ns, item.path))
        except OSError:
            pass
        from .listing import read_session_info  # a new session never lists the folder

        for _, path in sorted(candidates, reverse=True):
            if read_session_info(path) is not None:
                return cls.open(path, defer_context=defer_context)
            try:  # no readable header: a session that lost it is repaired by open()
                if os.path.getsize(path) and (found := cls.open(path)).entry_count():
                    return found
            except (OSError, store.SessionFileError):
                continue  # empty, or not a session file at all
        return cls.create(cwd, session_dir)

    @classmethod
    def open_by_id(
        cls,
        prefix: str,
        cwd: str | None = None,
        session_dir: str | os.PathLike[str] | None = None,
        *,
        defer_context: bool = False,
    ) -> SessionManager:
        """Open the session whose id starts with ``prefix``: the cwd's folder first, then all."""
        prefix = prefix.strip().lower()
        if not prefix:
            raise SessionLookupError("empty session id: give the id (or its first characters) of a session")
        root = _root(session_dir)
        from .listing import all_session_files

        scopes: list[list[str]] = []
        if cwd is not None:
            scopes.append(jsonl_in(root / cwd_slug(cwd)))
        scopes.append(all_session_files(root))
        # Subagents' sessions, kept out of the listings beside their parents: this folder's, then all.
        if cwd is not None:
            scopes.append(jsonl_in(root / cwd_slug(cwd) / SUBAGENT_FOLDER))
        scopes.append(subagent_files(root, SUBAGENT_FOLDER))
        for files in scopes:
            matches = match_prefix(files, prefix)
            if len(matches) == 1:
                return cls.open(matches[0][1], defer_context=defer_context)
            if len(matches) > 1:
                exact = [m for m in matches if m[0] == prefix]
                if len(exact) == 1:
                    return cls.open(exact[0][1], defer_context=defer_context)
                listed = "\n".join(f"  {sid}  {path}" for sid, path in matches[:20])
                more = f"\n  ... and {len(matches) - 20} more" if len(matches) > 20 else ""
                raise SessionLookupError(
                    f"session id prefix {prefix!r} is ambiguous; it matches {len(matches)} sessions:\n"
                    f"{listed}{more}\nGive more characters of the id."
                )
        raise SessionLookupError(f"no session with an id starting with {prefix!r} in {root}")

    @classmethod
    def fork(
        cls,
        source: str | os.PathLike[str] | SessionManager,
        entry_id: str | None = None,
        cwd: str | None = None,
        *,
        session_dir: str | os.PathLike[str] | None = None,
    ) -> SessionManager:
        """A new session holding the branch root..``entry_id`` (default: the source's leaf).

        Entry ids are kept, so labels and compactions still point at the right entries.
        Labels of copied entries are re-applied at the end; tags are not copied, because a
        tag binds one session to something outside (an external chat) and must stay unique.
        """
        origin = source if isinstance(source, SessionManager) else cls.open(source)
        target_id = entry_id if entry_id is not None else origin.get_leaf_id()
        if target_id is not None and target_id not in origin._store:
            raise KeyError(f"no entry {target_id!r} in session {origin.get_session_id()}")
        branch = origin.get_branch(target_id) if target_id is not None else []
        source_file = origin.get_session_file()
        new_cwd = os.path.abspath(cwd or origin.get_cwd())
        if session_dir is not None:
            forked = cls.create(new_cwd, session_dir, parent_session=source_file)
        elif source_file is None:
            forked = cls.in_memory(new_cwd)
        else:
            folder = Path(source_file).parent
            # Beside the source's cwd folder when it lives in a sessions root, else the default.
            root = folder.parent if folder.name.startswith("--") else sessions_dir()
            forked = cls.create(new_cwd, root, parent_session=source_file)
        copied = [e for e in branch if not isinstance(e, (LabelEntry, TagsEntry))]
        parent: str | None = None
        for entry in copied:
            clone = entry.model_copy(update={"parent_id": parent})
            forked._index(clone)
            parent = clone.id
        forked._leaf_id = parent
        for entry in copied:
            label = origin.get_label(entry.id)
            if label is not None:
                forked.append_label(entry.id, label)
        if any(_starts_file(e) for e in forked._store.entries()):
            forked._flush()
        return forked

    # ------------------------------------------------------------------ reading

    def get_session_id(self) -> str:
        return self._header.id

    def get_session_file(self) -> str | None:
        return str(self._path) if self._path is not None else None

    def get_cwd(self) -> str:
        return self._header.cwd

    def get_header(self) -> SessionHeader:
        return self._header

    def is_persisted(self) -> bool:
        """True once the file exists on disk (from the first message on)."""
        return self._persisted

    def get_entries(self) -> list[Any]:
        """Every entry in file order. Entries outside the current context are built from
        their lines for this call and not kept (``entry_store``)."""
        return self._store.entries()

    def iter_entries(self, *kinds: str, after: str | None = None) -> Iterator[Any]:
        """Entries in file order, one at a time: only of the types ``kinds`` when given,
        only those after the entry ``after`` when given. What reads through a long session
        should use instead of :meth:`get_entries`: an entry outside the current context is
        built only when reached, and one of another type not at all."""
        return self._store.iter_entries(frozenset(kinds) if kinds else None, after)

    def entry_count(self) -> int:
        """How many entries the session has, without building any."""
        return len(self._store)

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        entry: SessionEntry | None = self._store.get(entry_id)
        return entry

    def get_children(self, entry_id: str | None) -> list[Any]:
        """Direct children of an entry in file order (``None``: the roots)."""
        built = [self._store.get(i) for i in self._child_index().get(entry_id, [])]
        return [entry for entry in built if entry is not None]

    def get_leaf_id(self) -> str | None:
        return self._leaf_id

    def get_leaf_entry(self) -> SessionEntry | None:
        return self._store.get(self._leaf_id) if self._leaf_id is not None else None

    def get_branch(self, from_id: str | None = None) -> list[Any]:
        """Entries from the root to ``from_id`` (default: the leaf), root first."""
        path = list(self._store.walk_back(from_id if from_id is not None else self._leaf_id))
        path.reverse()
        return path

    def get_tree(self) -> list[SessionTreeNode]:
        """The whole tree for /tree: roots (and orphans of damaged parents) with children."""
        entries = self._store.entries()
        nodes = {e.id: SessionTreeNode(entry=e, label=self._labels.get(e.id)) for e in entries}
        parent_of = self._store.parent_of
        roots: list[SessionTreeNode] = []
        for entry in entries:
            node = nodes[entry.id]
            parent_id = parent_of(entry.id)
            parent = nodes.get(parent_id) if parent_id is not None else None
            if parent is None or parent is node:
                roots.append(node)
            else:
                parent.children.append(node)
        return roots

    def get_label(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    def get_session_name(self) -> str | None:
        return self._name

    def get_tags(self) -> dict[str, str]:
        return dict(self._tags)

    def build_session_context(self, leaf_id: str | None = None) -> SessionContext:
        """Messages, thinking level and model for ``leaf_id`` (default: the current leaf).

        Only the entries the model is sent are built: the branch from the leaf back to the
        latest compaction's first kept entry. Model and thinking level come from there, or
        else from the nearest change further up, found by type without building the rest.
        For the current leaf those entries are kept as objects and every other loaded entry
        is let go (the context is what the session holds).
        """
        target = leaf_id if leaf_id is not None else self._leaf_id
        cache = self._context_cache
        if cache is not None and cache[0] == target == self._leaf_id and cache[1] == len(self._store):
            chosen, older_ids = list(cache[2]), cache[3]
        else:
            chosen, older_ids = self._context_entries(target, keep=target == self._leaf_id)
            if target == self._leaf_id:
                self._context_cache = (target, len(self._store), chosen, older_ids)
        context = build_context(chosen)
        if older_ids and (context.model is None or context.thinking_level is None):
            self._fill_from_older(context, older_ids)
        return context

    def _context_entries(self, target: str | None, *, keep: bool) -> tuple[list[Any], list[str]]:
        """(the entries the context is built from, root first; the older ids of the branch,
        leaf first). ``keep`` holds on to those entries and lets every other loaded one go."""
        ids = self._store.path_ids(target)
        stop = len(ids)
        start = 0
        while (found := self._store.first_of_kind(ids[start:], "compaction")) is not None:
            index = start + found
            compaction = self._store.get(ids[index])
            if compaction is None:  # damaged: the next compaction up counts
                ids = self._store.path_ids(target)
                start = index
                continue
            older = ids[index + 1 :]
            stop = index + 1
            if compaction.first_kept_entry_id in older:
                stop += older.index(compaction.first_kept_entry_id) + 1
            break
        if keep:
            chosen = self._store.keep_all(ids[stop - 1 :: -1] if stop else [])
            self._store.release_except(set(ids[:stop]))
        else:
            get = self._store.get
            chosen = [e for e in (get(i) for i in reversed(ids[:stop])) if e is not None]
        return chosen, ids[stop:]

    def _fill_from_older(self, context: SessionContext, older_ids: list[str]) -> None:
        """The model and thinking level from above the compaction, when the kept part has none."""
        kind = self._store.kind
        for entry_id in older_ids:
            if context.model is not None and context.thinking_level is not None:
                return
            what = kind(entry_id)
            if what == "thinking_level_change" and context.thinking_level is None:
                entry = self._store.get(entry_id)
                if entry is not None:
                    context.thinking_level = entry.thinking_level
            elif what in ("model_change", "message") and context.model is None:
                entry = self._store.get(entry_id)
                if isinstance(entry, ModelChangeEntry):
                    context.model = (entry.provider, entry.model_id)
                elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
                    if entry.message.provider and entry.message.model:
                        context.model = (entry.message.provider, entry.message.model)

    # ------------------------------------------------------------------ a context built later

    @property
    def context_pending(self) -> bool:
        """Opened with ``defer_context`` and :meth:`finish_context` has not run yet."""
        return self._context_pending

    def context_tail(self, messages: int) -> SessionContext | None:
        """The end of the current context, for a screen to show before the rest is built.

        Entries are built (and kept: they are the context) from the leaf back until at least
        ``messages`` messages are found and the first one is not a tool result, so its tool
        calls are in the tail too. The model and thinking level are the whole branch's, and
        ``older_messages`` counts the context's messages before the tail. None when the walk
        reaches a compaction or the root first: that context is short, build all of it. Only
        for a session opened with ``defer_context``.
        """
        found = context_tail(self._store, self._leaf_id, messages)
        if found is None:
            return None
        entries, older_ids = found
        context = build_context(entries)
        context.older_messages = count_older(self._store, older_ids)
        if context.model is None or context.thinking_level is None:
            self._fill_from_older(context, older_ids)
        return context

    def finish_context(self) -> None:
        """Build and keep the rest of the current context (a worker thread may run this),
        then let go of the file's bytes; :meth:`build_session_context` afterwards only
        gathers the entries."""
        if not self._context_pending:
            return
        target = self._leaf_id
        chosen, older = self._context_entries(target, keep=True)
        self._context_cache = (target, len(self._store), chosen, older)
        self._store.done_loading()
        self._context_pending = False

    # ------------------------------------------------------------------ writing

    def append_message(self, message: AgentMessage) -> str:
        if isinstance(message, dict):
            message = parse_agent_message(message)
        return self._append(MessageEntry, message=message)

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append(ModelChangeEntry, provider=provider, model_id=model_id)

    def append_thinking_level_change(self, level: str) -> str:
        return self._append(ThinkingLevelChangeEntry, thinking_level=level)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: object = None,
        from_hook: bool = False,
    ) -> str:
        return self._append(
            CompactionEntry,
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
            from_hook=True if from_hook else None,
        )

    def append_custom_entry(self, custom_type: str, data: object = None) -> str:
        """Extension state: stored in the tree, never sent to the model."""
        return self._append(CustomEntry, custom_type=custom_type, data=data)

    def append_custom_message_entry(
        self, custom_type: str, content: object, display: bool = True, details: object = None
    ) -> str:
        """An extension message that is part of the model context."""
        return self._append(CustomMessageEntry, custom_type=custom_type, content=content, display=display, details=details)

    def append_checkpoint(self, kind: str, files: list[dict[str, Any]], **fields: object) -> str:
        """A file checkpoint (``docs/checkpoints.md``); never part of the model's context."""
        return self._append(CheckpointEntry, kind=kind, files=files, **fields)

    def prepare_checkpoint(self, kind: str, files: list[dict[str, Any]], **fields: Any) -> CheckpointEntry:
        """A checkpoint entry made (its id and parent fixed) but not appended yet: a restore
        writes it into its journal first, then :meth:`append_prepared` adds it."""
        entry_id = new_entry_id()
        while entry_id in self._store:
            entry_id = new_entry_id()
        return CheckpointEntry(id=entry_id, parent_id=self._leaf_id, kind=kind, files=files, **fields)

    def append_prepared(self, entry: SessionEntry) -> str:
        if entry.id in self._store:
            raise KeyError(f"the entry {entry.id} is in the session already")
        self._index(entry)
        self._write(entry)
        return str(entry.id)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with ``None``/blank, clear) the label of an entry."""
        if target_id not in self._store:
            raise KeyError(f"cannot label {target_id!r}: no such entry in this session")
        cleaned = label.strip() if isinstance(label, str) else None
        return self._append(LabelEntry, target_id=target_id, label=cleaned or None)

    def append_session_info(self, name: str | None) -> str:
        # One line: a name is shown in one row (footer, pickers, listings); newlines and tabs
        # typed or sent into it become single spaces.
        cleaned = " ".join(name.split()) if isinstance(name, str) else None
        return self._append(SessionInfoEntry, name=cleaned or None)

    def append_tags(self, tags: dict[str, str | None]) -> str | None:
        """Merge tags (``None`` deletes a key). Returns None, writing nothing, if ``tags`` is empty."""
        delta = _check_tags(tags)
        if not delta:
            return None
        return self._append(TagsEntry, tags=delta)

    def set_tags(self, tags: dict[str, str]) -> str | None:
        """Replace all tags: appends the delta (deletions as ``None``), or nothing if equal."""
        wanted = _check_tags(tags)
        if any(v is None for v in wanted.values()):
            raise ValueError("set_tags takes string values; use append_tags with None to delete one key")
        delta: dict[str, str | None] = {k: None for k in self._tags if k not in wanted}
        delta.update({k: v for k, v in wanted.items() if self._tags.get(k) != v})
        if not delta:
            return None
        return self._append(TagsEntry, tags=delta)

    # ------------------------------------------------------------------ tree navigation

    def branch(self, entry_id: str) -> None:
        """Move the leaf: the next append becomes a child of ``entry_id``."""
        if entry_id not in self._store:
            raise KeyError(f"cannot branch from {entry_id!r}: no such entry in this session")
        self._leaf_id = entry_id

    def branch_with_summary(
        self, entry_id: str | None, summary: str, details: object = None, from_hook: bool = False
    ) -> str:
        """Go back to ``entry_id`` (``None``: before the first entry), leaving a summary of
        the abandoned branch as the new leaf so the model keeps what was learned there."""
        if entry_id is not None and entry_id not in self._store:
            raise KeyError(f"cannot branch from {entry_id!r}: no such entry in this session")
        self._leaf_id = entry_id
        return self._append(
            BranchSummaryEntry,
            from_id=entry_id if entry_id is not None else "root",
            summary=summary,
            details=details,
            from_hook=True if from_hook else None,
        )

    def repair_interrupted_tool_calls(self) -> list[ToolResultMessage]:
        """Answer tool calls that a killed run left without results, on the current branch.

        When Wolli dies while a tool runs, the file ends with an assistant message whose
        tool calls have no results, and every provider rejects such a context. Each missing
        result is appended as an error result (and returned, so a live agent can take them).
        """
        pending: dict[str, str] = {}
        for entry in self._store.walk_back(self._leaf_id):
            message = entry.message if isinstance(entry, MessageEntry) else None
            role = getattr(message, "role", None)
            if role == "toolResult":
                pending.setdefault(message.tool_call_id, "")  # type: ignore[union-attr]
                continue
            if role == "assistant":
                answered = set(pending)
                missing = [c for c in message.tool_calls() if c.id not in answered]  # type: ignore[union-attr]
                repairs = [interrupted_result(call.id, call.name) for call in missing]
                for repair in repairs:
                    self.append_message(repair)
                return repairs
            if isinstance(entry, MessageEntry):  # a user message: the tail holds no open calls
                return []
        return []

    def claim_writer(self) -> None:
        """Become the one process writing this session's file (``writer_lock``); raises
        ``SessionBusyError`` when another live process is. A session not on disk yet claims
        its file just before creating it; one in memory has nothing to claim."""
        if self._path is None or self._release is not None:
            return
        if not self._persisted:
            self._claim_at_flush = True
            return
        writer_lock.claim(self._path)
        self._release = weakref.finalize(self, writer_lock.release, self._path)

    def release_writer(self) -> None:
        """Give the file back (the session closed); another process may write it now."""
        self._claim_at_flush = False
        if self._release is not None:
            self._release()
            self._release = None

    def stop_writing(self) -> None:
        """Keep the session in memory only from now on (the disk refused a write)."""
        self._writing_stopped = True

    @property
    def writing_stopped(self) -> bool:
        return self._writing_stopped

    def reset_leaf(self) -> None:
        """Navigate to before the first entry: the next append starts a new root."""
        self._leaf_id = None

    # ------------------------------------------------------------------ internals

    def _index(self, entry: SessionEntry) -> None:
        self._store.add(entry)
        if self._children is not None:
            self._children.setdefault(entry.parent_id, []).append(entry.id)
        self._leaf_id = entry.id
        self._fold(entry)

    def _index_loaded(self, loaded: store.LoadedSession, path: Path, *, defer_context: bool = False) -> None:
        """``_index`` for a whole file at once: the index taken, labels, name and tags folded,
        the leaf set and the current context built (and kept) while the file's bytes are at
        hand (or, with ``defer_context``, later by ``finish_context``, the bytes kept until
        then). A leaf whose line turns out damaged gives way to the entry before it."""
        entries = loaded.entries
        self._store.load(entries, path, loaded.raw)
        get = self._store.get
        fold = self._fold
        for entry in entries:
            if entry.type in _FOLDED:
                built = get(entry.id)
                if built is not None:
                    fold(built)
        self._leaf_id = self._store.last_id()
        while self._leaf_id is not None and get(self._leaf_id, keep=True) is None:
            self._leaf_id = self._store.last_id()
        if defer_context:
            self._context_pending = True
            return
        chosen, older = self._context_entries(self._leaf_id, keep=True)  # while the bytes are at hand
        self._context_cache = (self._leaf_id, len(self._store), chosen, older)
        self._store.done_loading()

    def _child_index(self) -> dict[str | None, list[str]]:
        if self._children is None:
            children: dict[str | None, list[str]] = {}
            parent_of = self._store.parent_of
            for entry_id in self._store.ids():
                children.setdefault(parent_of(entry_id), []).append(entry_id)
            self._children = children
        return self._children

    def _fold(self, entry: SessionEntry) -> None:
        """Labels, the session name and tags: later entries win, in file order."""
        if isinstance(entry, LabelEntry):
            if entry.label:
                self._labels[entry.target_id] = entry.label
            else:
                self._labels.pop(entry.target_id, None)
        elif isinstance(entry, SessionInfoEntry):
            self._name = entry.name or None
        elif isinstance(entry, TagsEntry):
            fold_tags(self._tags, entry.tags)

    def _append(self, cls: type, **fields: object) -> str:
        entry_id = new_entry_id()
        while entry_id in self._store:
            entry_id = new_entry_id()
        entry = cls(id=entry_id, parent_id=self._leaf_id, **fields)
        self._index(entry)
        self._write(entry)
        return entry.id

    def _write(self, entry: SessionEntry) -> None:
        if self._writing_stopped:
            pass
        elif self._persisted:
            store.append_lines(
                self._path,  # type: ignore[arg-type]
                [entry.to_json()],
                header=self._header.to_json(),
                sync=_needs_sync(entry),
            )
        elif self._path is not None and _starts_file(entry):
            self._flush()

    def _flush(self) -> None:
        """Write the header and every buffered entry in one go (at the first message)."""
        if self._path is None or self._persisted:
            return
        entries = self._store.entries()
        lines = [self._header.to_json(), *(e.to_json() for e in entries)]
        sync = any(_needs_sync(e) for e in entries)
        if self._claim_at_flush:  # held before the file exists: no `-c` elsewhere finds it unowned
            self._claim_at_flush = False
            try:
                writer_lock.claim(self._path)
                self._release = weakref.finalize(self, writer_lock.release, self._path)
            except writer_lock.SessionBusyError:
                pass  # one new path opened by two processes at once: the store's lock still holds
        if self._path.exists():  # an empty file opened by path: fill it in place
            store.append_lines(self._path, lines, sync=sync)
        else:
            store.write_new(self._path, lines, sync=sync)
        self._persisted = True


# Entry types folded into labels, the session name and tags (``_fold``), read on open.
_FOLDED = frozenset({"label", "session_info", "tags"})


def _starts_file(entry: SessionEntry) -> bool:
    """A message of the conversation: from here on the session is worth a file."""
    return isinstance(entry, (MessageEntry, CustomMessageEntry))


def _needs_sync(entry: SessionEntry) -> bool:
    return isinstance(entry, MessageEntry) and getattr(entry.message, "role", None) in SYNCED_ROLES


def _check_tags(tags: dict[str, Any]) -> dict[str, str | None]:
    if not isinstance(tags, dict):
        raise TypeError("tags must be a dict of str -> str (or None to delete)")
    for key, value in tags.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"tag keys must be non-empty strings, got {key!r}")
        if value is not None and not isinstance(value, str):
            raise ValueError(f"tag {key!r} must have a string value (or None to delete), got {type(value).__name__}")
    return dict(tags)
