"""Loading an agent's text resources: context files, SOUL/MEMORY/USER, skills, prompt templates.

Everything here reads small markdown files once per session start (or ``/reload``); the
snapshots are frozen so the system prompt stays stable (and cacheable) within a session.
A broken file never stops loading: it is skipped and reported in ``ResourceSet.errors``.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from pathlib import Path

from ...base.front_matter import parse_front_matter
from ...base.records import record
from ...base.safe_files import read_head

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
_MAX_CONTEXT_FILE_BYTES = 256 * 1024


@record(frozen=True)
class ContextFile:
    path: str
    content: str


@record(frozen=True)
class Skill:
    name: str
    description: str
    path: str  # the SKILL.md file
    base_dir: str
    disable_model_invocation: bool = False


@record(frozen=True)
class PromptTemplate:
    name: str
    description: str
    content: str
    path: str


@record
class ResourceSet:
    context_files: list[ContextFile] = field(default_factory=list)
    soul: str = ""
    memory: str = ""
    user: str = ""
    skills: list[Skill] = field(default_factory=list)
    prompts: list[PromptTemplate] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- loaders


def _read_text(path: Path, errors: list[str]) -> str | None:
    """The file's text, or None when it is absent; a file that exists but cannot be read
    (permissions, a folder in its place, a symlink loop) is reported, never raised."""
    try:
        data, cut = read_head(path, _MAX_CONTEXT_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # also a FIFO or device in the file's place (read_head refuses it)
        errors.append(f"Could not read {path}: {exc.strerror or exc}; skipped it.")
        return None
    if cut:
        errors.append(f"{path} is over {_MAX_CONTEXT_FILE_BYTES // 1024} KB: only its first "
                      f"{_MAX_CONTEXT_FILE_BYTES // 1024} KB is used.")
    return data.decode("utf-8", "replace")


def load_context_files(agent_dir: Path, cwd: str, errors: list[str]) -> list[ContextFile]:
    """AGENTS.md (or CLAUDE.md) from the agent home, then from the root down to ``cwd``.

    One file per folder (AGENTS.md wins); a file reached twice (a symlink, or the agent
    home inside the project) is read once, at its first place.
    """
    found: list[ContextFile] = []
    seen: set[str] = set()

    def take(directory: Path) -> None:
        for name in CONTEXT_FILE_NAMES:
            path = directory / name
            real = os.path.realpath(path)
            if real in seen:
                return
            text = _read_text(path, errors)
            if text is not None:
                seen.add(real)
                found.append(ContextFile(str(path), text))
                return

    take(agent_dir)
    current = Path(os.path.abspath(cwd))
    chain = [current, *current.parents]
    for directory in reversed(chain):
        take(directory)
    return found


def _listing(base: Path, errors: list[str]) -> list[Path]:
    """A folder's entries, sorted; a folder that cannot be listed is reported."""
    try:
        return sorted(base.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        errors.append(f"Could not list {base}: {exc.strerror or exc}; skipped it.")
        return []


def _loose_markdown(entries: list[Path]) -> list[Path]:
    # Not ``is_file()``: a file that cannot be read (a symlink loop) must be reported, not hidden.
    return [p for p in entries if p.name.endswith(".md") and not p.is_dir()]


def load_skills(directories: list[Path], errors: list[str]) -> list[Skill]:
    """Skills are ``<dir>/<name>/SKILL.md`` (or ``<dir>/<name>.md``) with front matter."""
    skills: dict[str, Skill] = {}
    for base in directories:
        entries = _listing(base, errors)
        nested = [d / "SKILL.md" for d in entries if d.is_dir() and os.path.lexists(d / "SKILL.md")]
        for path in nested + _loose_markdown(entries):
            text = _read_text(path, errors)
            if text is None:
                continue
            meta, _ = parse_front_matter(text)
            name = meta.get("name") or (path.parent.name if path.name == "SKILL.md" else path.stem)
            description = meta.get("description", "").strip()
            if not description:
                errors.append(
                    f"Skill {path} has no description in its front matter; skipped it "
                    "(add `description: ...` between the --- lines)."
                )
                continue
            if not name or any(ch.isspace() for ch in name):
                errors.append(f"Skill {path} has the name {name!r}; a skill name cannot contain spaces. Skipped it.")
                continue
            if name in skills:
                # First definition wins (agent home before the extra paths from settings).
                errors.append(f"Skill {path} has the same name as {skills[name].path} ({name!r}); skipped it.")
                continue
            skills[name] = Skill(
                name=name,
                description=description,
                path=str(path),
                base_dir=str(path.parent),
                disable_model_invocation=meta.get("disable-model-invocation", "").strip().lower() == "true",
            )
    return list(skills.values())


def load_prompt_templates(directories: list[Path], errors: list[str]) -> list[PromptTemplate]:
    """Prompt templates are ``<dir>/<name>.md``; ``/name args`` expands them."""
    templates: dict[str, PromptTemplate] = {}
    for base in directories:
        for path in _loose_markdown(_listing(base, errors)):
            text = _read_text(path, errors)
            if text is None:
                continue
            meta, body = parse_front_matter(text)
            description = meta.get("description") or _first_line(body)
            templates.setdefault(path.stem, PromptTemplate(path.stem, description, body, str(path)))
    return list(templates.values())


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip()[:80]
    return ""


def load_resources(
    agent_dir: Path,
    cwd: str,
    *,
    extra_skill_dirs: list[Path] | None = None,
    extra_prompt_dirs: list[Path] | None = None,
    include_context_files: bool = True,
) -> ResourceSet:
    errors: list[str] = []
    snapshot = {name: _read_text(agent_dir / f"{name.upper()}.md", errors) or "" for name in ("soul", "memory", "user")}
    return ResourceSet(
        context_files=load_context_files(agent_dir, cwd, errors) if include_context_files else [],
        soul=snapshot["soul"],
        memory=snapshot["memory"],
        user=snapshot["user"],
        skills=load_skills([agent_dir / "skills", *(extra_skill_dirs or [])], errors),
        prompts=load_prompt_templates([agent_dir / "prompts", *(extra_prompt_dirs or [])], errors),
        errors=errors,
    )


# ---------------------------------------------------------------------------- expansion

# $1 $2 ... (positional), ${@:N} / ${@:N:L} (slices), $ARGUMENTS and $@ (the whole text).
_PLACEHOLDER = re.compile(r"\$(?:([1-9]\d*)|\{@:(\d+)(?::(\d+))?\}|(ARGUMENTS)\b|(@))")
_ARGUMENT = re.compile(r"\"([^\"]*)\"(?=\s|$)|'([^']*)'(?=\s|$)|(\S+)")


def expand_prompt_template(template: PromptTemplate, args_text: str) -> str:
    """Substitute the placeholders of a template body in one pass.

    ``$1``.. take the quoted-or-bare words of ``args_text``; ``$@`` and ``$ARGUMENTS`` take
    the argument text as typed (trimmed); ``${@:N}`` the words from N on, ``${@:N:L}`` L
    of them. Missing arguments become empty. One pass, so a ``$1`` inside an argument
    stays as typed.
    """
    args = split_arguments(args_text)
    whole = args_text.strip()

    def substitute(match: re.Match[str]) -> str:
        position, start, length, arguments, at = match.groups()
        if position is not None:
            index = int(position) - 1
            return args[index] if index < len(args) else ""
        if start is not None:
            first = max(int(start), 1) - 1
            chosen = args[first:] if length is None else args[first : first + int(length)]
            return " ".join(chosen)
        return whole

    return _PLACEHOLDER.sub(substitute, template.content)


def split_arguments(text: str) -> list[str]:
    """Words of ``text``; ``"..."`` or ``'...'`` around a word keeps its spaces together.

    Quotes count only around a whole word, so apostrophes (``don't``) and backslashes
    (``C:\\dir``) stay as typed, and an unclosed quote is an ordinary character.
    """
    out: list[str] = []
    for match in _ARGUMENT.finditer(text):
        double, single, bare = match.groups()
        out.append(double if double is not None else single if single is not None else bare)
    return out


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def expand_skill(skill: Skill, args_text: str) -> str:
    """``/skill:name args`` -> the skill's instructions wrapped for the model."""
    try:
        body = parse_front_matter(read_head(skill.path, _MAX_CONTEXT_FILE_BYTES)[0].decode("utf-8", "replace"))[1]
    except OSError as exc:
        body = f"(could not read {skill.path}: {exc.strerror or exc})"
    text = (
        f'<skill name="{_attr(skill.name)}" location="{_attr(skill.path)}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body.strip()}\n</skill>"
    )
    if args_text.strip():
        text += f"\n\n{args_text.strip()}"
    return text
