"""Content-addressed blobs: a file's bytes stored once under their sha256.

Blobs live in ``<folder of the session file>/blobs/ab/cdef…`` (``0700`` folders, ``0600``
files: they hold whatever the project's files held), shared by every session of that
folder, so a fork's checkpoints find theirs. A blob is written to a temporary file and
renamed into place, so a reader never sees half of one; an existing blob is not written
again. Sessions that are not saved (``--no-session``) keep theirs in a temporary folder
that goes away with the process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
_CHUNK = 1 << 20


class BlobError(OSError):
    """A blob that should be there is missing or damaged."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    def __init__(self, root: Path, *, temporary: bool = False) -> None:
        self.root = Path(root)
        self.temporary = temporary

    @classmethod
    def beside(cls, session_file: str | None) -> BlobStore:
        """The store of a session file's folder, or a temporary one for an unsaved session."""
        if session_file:
            return cls(Path(session_file).parent / "blobs")
        return cls(Path(tempfile.mkdtemp(prefix="wolli-checkpoints-")), temporary=True)

    def path_of(self, sha: str) -> Path:
        if len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha):
            raise BlobError(f"{sha!r} is not a blob name")
        return self.root / sha[:2] / sha[2:]

    def has(self, sha: str) -> bool:
        return self.path_of(sha).is_file()

    def put(self, data: bytes) -> str:
        """Store ``data``; returns its sha256."""
        sha = sha256_of(data)
        target = self.path_of(sha)
        if target.is_file():
            return sha
        target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".blob-", dir=str(target.parent))
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.chmod(temporary, FILE_MODE)
            os.replace(temporary, target)
        except BaseException:
            _unlink(temporary)
            raise
        return sha

    def get(self, sha: str) -> bytes:
        try:
            data = self.path_of(sha).read_bytes()
        except FileNotFoundError:
            raise BlobError(f"the checkpoint blob {sha[:12]} is missing from {self.root}") from None
        if sha256_of(data) != sha:
            raise BlobError(f"the checkpoint blob {sha[:12]} in {self.root} is damaged")
        return data

    def link_into(self, other: BlobStore, shas: set[str]) -> int:
        """Make ``shas`` available in ``other`` too (hard links, copies where links fail)."""
        copied = 0
        for sha in shas:
            source, target = self.path_of(sha), other.path_of(sha)
            if target.is_file() or not source.is_file():
                continue
            target.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copyfile(source, target)
                os.chmod(target, FILE_MODE)
            copied += 1
        return copied

    def discard(self) -> None:
        """Remove a temporary store (an unsaved session ending)."""
        if self.temporary:
            shutil.rmtree(self.root, ignore_errors=True)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
