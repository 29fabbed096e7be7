"""Taking checkpoints while the agent works: one session's part of ``docs/checkpoints.md``.

Called around every tool call that will run (:mod:`..tool_hooks`):

- before an ``edit`` or ``write`` that touches a file for the first time since the user's
  last message (a rewind goes back to before a message, so the first content after it is
  the one needed): the file's content is kept (a blob) and noted as *pending* in a small
  file beside the blobs; after the call, one ``checkpoint`` entry records the content
  before and the hash after, and the pending note goes. Killed in between, the next open
  of the session records the pending note (:func:`~wolli.session.checkpoints.restore.recover_beside`);
- before a ``bash`` command in a git work tree: ``git status`` and the content of the files
  already changed; after it: ``git status`` again, and an entry for what it changed;
- a file changed again in the same run: its new hash waits in memory; when the run ends,
  one ``settle`` entry records those, so a later rewind can tell a file changed outside
  Wolli from one Wolli changed last. One entry per first change keeps long sessions quick
  to load (``tests/perf/bench_checkpoints.py``).

Everything that touches the disk runs in a worker thread, so the front end stays
responsive. Checkpoints are off with settings ``checkpoints.enabled: false``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported at the first change: a session that edits nothing never loads them
    from ...session.checkpoints.blobs import BlobStore
    from ...session.checkpoints.git_capture import GitSnapshot
    from ...session.checkpoints.records import FileState, HashCache
    from .guarded import GuardedSession

FILE_TOOLS = frozenset({"edit", "write"})


class TurnCheckpoints:
    # ``session`` is the LiveSession (not imported: it imports this module).
    def __init__(self, session: GuardedSession) -> None:
        self.session = session
        self._cache: HashCache | None = None
        self._store: BlobStore | None = None
        self._turn: int | None = None  # id() of the user message the current changes follow
        self._seen: set[str] = set()  # files recorded since that message
        self._unsettled: dict[str, FileState] = {}  # files changed again, as the tools left them
        self._pending: dict[str, list[dict[str, Any]]] = {}  # before-records by tool call id
        # One pending-file write at a time: tool calls (and subagents, which share their
        # parent's checkpoints) run at once, and each write must hold the calls of its moment.
        self._pending_write = asyncio.Lock()
        self._git: dict[str, GitSnapshot] = {}  # by tool call id
        self._top: tuple[str, str | None] | None = None  # (cwd, work tree top)

    # ------------------------------------------------------------------ settings and places

    @property
    def enabled(self) -> bool:
        return self.session.settings.get("checkpoints.enabled") is not False

    @property
    def limit(self) -> int:
        value = self.session.settings.get("checkpoints.maxFileBytes")
        return value if isinstance(value, int) and value > 0 else 10_000_000

    @property
    def cache(self) -> HashCache:
        if self._cache is None:
            from ...session.checkpoints.records import HashCache

            self._cache = HashCache()
        return self._cache

    @property
    def store(self) -> BlobStore:
        """Blobs beside the session file (a temporary folder for an unsaved session)."""
        from ...session.checkpoints.blobs import BlobStore

        path = self.session.session_file if self.session.session_manager.is_persisted() else None
        if self._store is None or (path and self._store.temporary):
            fresh = BlobStore.beside(path if path else None)
            if self._store is not None and self._store.temporary and not fresh.temporary:
                self._store.link_into(fresh, _all_blobs(self._store))
                self._store.discard()
            self._store = fresh
            if not fresh.temporary:
                from ...session.checkpoints.sweep import sweep_in_background

                sweep_in_background(fresh.root.parent, only_if_due=True)
        return self._store

    def _work_tree(self) -> str | None:
        from ...session.checkpoints.git_capture import work_tree

        cwd = self.session.cwd
        if self._top is None or self._top[0] != cwd:
            self._top = (cwd, work_tree(cwd))
        return self._top[1]

    def _paths(self, arguments: dict[str, Any]) -> list[str]:
        from ...permissions.path_rules import absolute
        from ...session.checkpoints.records import real

        path = arguments.get("path")
        if not isinstance(path, str) or not path.strip() or "\0" in path:
            return []  # no file can have that name: the tool itself refuses it
        return [real(absolute(path, self.session.cwd))]

    def _sync_turn(self) -> None:
        """A new message of the user's since the last change: files count as untouched again."""
        turn = _last_user_message(self.session.messages)
        if turn != self._turn:
            self._turn, self._seen = turn, set()

    # ------------------------------------------------------------------ around a tool call

    async def before(self, tool_call_id: str, name: str, arguments: dict[str, Any]) -> None:
        if not self.enabled or (name not in FILE_TOOLS and name != "bash"):
            return
        from ...session.checkpoints.git_capture import snapshot
        from ...session.checkpoints.records import before_record, capture

        self._sync_turn()
        if name in FILE_TOOLS:
            fresh = [p for p in self._paths(arguments) if p not in self._seen]
            if not fresh:
                return
            store, limit = self.store, self.limit
            states = await asyncio.to_thread(lambda: [capture(store, p, limit) for p in fresh])
            self._seen.update(fresh)
            self._pending[tool_call_id] = [before_record(s) for s in states]
            await self._save_pending()
        elif name == "bash":
            top = await asyncio.to_thread(self._work_tree)
            if top is None:
                return
            store, limit = self.store, self.limit
            snap = await asyncio.to_thread(snapshot, store, self.session.cwd, limit, top)
            if snap is not None:
                self._git[tool_call_id] = snap

    async def after(self, tool_call_id: str, name: str, arguments: dict[str, Any]) -> None:
        if not self.enabled or (name not in FILE_TOOLS and tool_call_id not in self._git):
            return
        from ...session.checkpoints.git_capture import changes
        from ...session.checkpoints.records import after_record, before_record, current

        if name in FILE_TOOLS:
            records = self._pending.pop(tool_call_id, None)
            paths = self._paths(arguments)
            states = await asyncio.to_thread(lambda: [current(p, self.cache) for p in paths])
            if records is None:  # a file already recorded since the user's message: settled later
                self._unsettled.update((s.path, s) for s in states)
                return
            after = {s.path: s for s in states}
            for record in records:
                state = after.get(record["path"])
                if state is not None:
                    record.update(after_record(state))
                    self._unsettled.pop(state.path, None)
            self._record("tool", records, tool_call_id=tool_call_id)
            await self._save_pending()
            return
        snap = self._git.pop(tool_call_id, None)
        if name != "bash" or snap is None:
            return
        store, limit, cache = self.store, self.limit, self.cache
        changed = await asyncio.to_thread(changes, store, snap, limit, cache)
        if not changed:
            return
        nows = await asyncio.to_thread(lambda: [current(s.path, cache) for s in changed])
        self._sync_turn()
        records = []
        for before, now in zip(changed, nows, strict=True):
            self._unsettled.pop(now.path, None)
            record = {**after_record(now), **before_record(before)} if before.path not in self._seen else \
                after_record(now)
            self._seen.add(before.path)
            records.append(record)
        self._record("bash", records, tool_call_id=tool_call_id)

    def settle(self) -> None:
        """The run ended: how it left the files it changed more than once."""
        if not self._unsettled:
            return
        from ...session.checkpoints.records import after_record

        records = [after_record(state) for state in self._unsettled.values()]
        self._unsettled.clear()
        self._record("settle", records)

    def _record(self, kind: str, files: list[dict[str, Any]], **fields: object) -> None:
        if not files:
            return
        try:
            self.session.session_manager.append_checkpoint(kind, files, **fields)
        except OSError as exc:
            self.session._stop_writing(exc)

    async def _save_pending(self) -> None:
        """The before-records of the calls running now, where a crash cannot lose them. The
        list is taken on the loop (the calls change it there) and under the lock, so the
        write that lands last holds the latest calls."""
        async with self._pending_write:
            calls = [{"toolCallId": k, "files": v} for k, v in self._pending.items()]
            await asyncio.to_thread(self._write_pending, calls)

    def _write_pending(self, calls: list[dict[str, Any]]) -> None:
        from ...session.checkpoints.restore import write_pending

        manager = self.session.session_manager
        if manager.is_persisted() and not manager.writing_stopped:
            write_pending(self.store, manager.get_session_file(), calls)

    def forget_files(self, paths: list[str]) -> None:
        """These files were just restored: their next change is a first change again."""
        self._seen.difference_update(paths)

    def close(self) -> None:
        if self._store is not None:
            self._store.discard()


def share_blobs(origin: GuardedSession, forked: GuardedSession) -> None:
    """A fork stored in another folder (or not stored) gets the blobs its checkpoints name."""
    from ...session.checkpoints.plan import blobs_of

    source, target = origin.checkpoints.store, forked.checkpoints.store
    if source.root != target.root:
        source.link_into(target, blobs_of(forked.session_manager.iter_entries("checkpoint")))


def _last_user_message(messages: list[Any]) -> int | None:
    for message in reversed(messages):
        if getattr(message, "role", None) == "user":
            return id(message)
    return None


def _all_blobs(store: BlobStore) -> set[str]:
    out: set[str] = set()
    try:
        for folder in store.root.iterdir():
            if len(folder.name) == 2 and folder.is_dir():
                out.update(folder.name + p.name for p in folder.iterdir() if len(p.name) == 62)
    except OSError:
        pass
    return out
