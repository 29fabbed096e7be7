"""What ``wolli install SOURCE`` names: a package index name, a git repository, or a path.

``name``, ``name==1.2``, ``name>=1,<2`` and ``name@1.2`` (npm's spelling, read as ``==``)
are index requirements. A git source is ``git+<url>``, ``git@host:owner/repo``, ``ssh://``,
or any URL or path ending in ``.git``; its ref follows as ``@ref`` (after the path) or
``#ref``. Anything that exists on disk, or starts with ``/``, ``./``, ``../`` or ``~``, is a
path (a project folder, a wheel or sdist, or a Claude Code plugin folder).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from ..base.records import record

SourceKind = Literal["index", "git", "path"]

_REQUIREMENT_TEXT = (
    r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?P<extras>\[[A-Za-z0-9._,\s-]*\])?"
    r"\s*(?P<spec>(?:(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)*)$"
)
_NPM_VERSION_TEXT = r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)@(?P<version>[0-9][A-Za-z0-9.+!_-]*)$"


class SourceError(ValueError):
    """A source that names nothing installable; the message says what would."""


@record(frozen=True)
class Source:
    kind: SourceKind
    given: str  # as typed
    target: str  # index: the requirement; git: the clone URL; path: the absolute path
    ref: str | None = None  # git: branch, tag or commit
    name: str | None = None  # index: the distribution name

    def describe(self) -> str:
        if self.kind == "index":
            return f"{self.target} from the package index"
        if self.kind == "git":
            return f"the git repository {self.target}" + (f" at {self.ref}" if self.ref else "")
        return f"the local path {self.target}"


def canonical_name(name: str) -> str:
    """PEP 503 normalisation: ``My_Package`` and ``my-package`` are the same distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_source(text: str, cwd: str | Path = ".") -> Source:
    given = text.strip()
    if not given:
        raise SourceError("give a package: a name (my-pkg==1.0), a git URL (git+https://...@v1) or a path")
    git = _git_source(given)
    if git is not None:
        return git
    path = Path(given).expanduser()
    path = path if path.is_absolute() else Path(cwd) / path
    if given.startswith(("/", "./", "../", "~", ".")) or os.path.exists(path) or given.startswith("file://"):
        if given.startswith("file://"):
            path = Path(given[len("file://"):])
        if not path.exists():
            raise SourceError(f"{given}: no such file or folder")
        return Source("path", given, str(path.resolve()))
    npm = re.match(_NPM_VERSION_TEXT, given)
    if npm:
        given_req = f"{npm.group('name')}=={npm.group('version')}"
        return Source("index", given, given_req, name=npm.group("name"))
    match = re.match(_REQUIREMENT_TEXT, given)
    if match is None:
        raise SourceError(f"{given!r} is not a package name, a git URL or a path that exists "
                          "(examples: my-pkg, my-pkg==1.2, git+https://host/repo.git@v1, ./my-pkg)")
    return Source("index", given, given.replace(" ", ""), name=match.group("name"))


def _git_source(given: str) -> Source | None:
    url = given[4:] if given.startswith("git+") else given
    last = url.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    looks_git = (given.startswith(("git+", "git@", "ssh://")) or ".git" in last
                 or re.match(r"^https?://(github\.com|gitlab\.com|codeberg\.org|bitbucket\.org)/[^/]+/[^/#@]+", url))
    if not looks_git:
        return None
    ref: str | None = None
    if "#" in url:
        url, _, fragment = url.partition("#")
        ref = fragment if fragment and "=" not in fragment else None
    else:
        cut = max(url.rfind("/"), url.rfind(":"))
        at = url.rfind("@")
        if at > cut > 0:
            url, ref = url[:at], url[at + 1:] or None
    if not url:
        raise SourceError(f"{given!r}: no repository URL")
    return Source("git", given, url, ref=ref)
