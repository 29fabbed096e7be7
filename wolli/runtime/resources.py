"""Loading an agent's text resources: context files, SOUL/MEMORY/USER, skills, prompt templates.

Everything here reads small markdown files once per session start (or ``/reload``); the
snapshots are frozen so the system prompt stays stable (and cacheable) within a session.
A broken file never stops loading: it is skipped and reported in ``ResourceSet.errors``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
_MAX_CONTEXT_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class ContextFile:
    path: str
    content: str


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: str  # the SKILL.md file
    base_dir: str
    disable_model_invocation: bool = False


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    description: str
    content: str
    path: str


@dataclass
class ResourceSet:
    context_files: list[ContextFile] = field(default_factory=list)
    soul: str = ""
    memory: str = ""
    user: str = ""
    skills: list[Skill] = field(default_factory=list)
    prompts: list[PromptTemplate] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- front matter


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split ``---``-fenced ``key: value`` front matter from a markdown body.

    A deliberately small YAML subset (scalars, quoted strings, ``>``/``|`` folded blocks):
    skills and prompt templates only use flat keys, and a YAML dependency is not worth it.
    """
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return {}, text
    meta: dict[str, str] = {}
    key: str | None = None
    block: list[str] = []
    for line in lines[1:end]:
        match = re.match(r"^([A-Za-z0-9_-]+):\s*(.*)$", line)
        if match and not line.startswith((" ", "\t")):
            if key is not None and block:
                meta[key] = " ".join(b.strip() for b in block).strip()
            key, value = match.group(1), match.group(2).strip()
            block = []
            if value in (">", "|", ">-", "|-"):
                meta[key] = ""
                continue
            meta[key] = _unquote(value)
            key = None if value else key
        elif key is not None:
            block.append(line)
    if key is not None and block:
        meta[key] = " ".join(b.strip() for b in block).strip()
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return meta, body


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


# ---------------------------------------------------------------------------- loaders


def _read_text(path: Path, errors: list[str]) -> str | None:
    try:
        data = path.read_bytes()[:_MAX_CONTEXT_FILE_BYTES]
        return data.decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        errors.append(f"Could not read {path}: {exc}")
        return None


def load_context_files(agent_dir: Path, cwd: str, errors: list[str]) -> list[ContextFile]:
    """AGENTS.md (or CLAUDE.md) from the agent home, then from the root down to ``cwd``."""
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


def load_skills(directories: list[Path], errors: list[str]) -> list[Skill]:
    """Skills are ``<dir>/<name>/SKILL.md`` (or ``<dir>/<name>.md``) with front matter."""
    skills: dict[str, Skill] = {}
    for base in directories:
        if not base.is_dir():
            continue
        candidates = sorted(base.glob("*/SKILL.md")) + sorted(base.glob("*.md"))
        for path in candidates:
            text = _read_text(path, errors)
            if text is None:
                continue
            meta, _ = parse_front_matter(text)
            name = meta.get("name") or (path.parent.name if path.name == "SKILL.md" else path.stem)
            description = meta.get("description", "").strip()
            if not description:
                errors.append(f"Skill {path} has no description in its front matter; skipped.")
                continue
            if name in skills:
                continue  # first definition wins (agent home before extra paths)
            skills[name] = Skill(
                name=name,
                description=description,
                path=str(path),
                base_dir=str(path.parent),
                disable_model_invocation=meta.get("disable-model-invocation", "").lower() == "true",
            )
    return list(skills.values())


def load_prompt_templates(directories: list[Path], errors: list[str]) -> list[PromptTemplate]:
    templates: dict[str, PromptTemplate] = {}
    for base in directories:
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*.md")):
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


def expand_prompt_template(template: PromptTemplate, args_text: str) -> str:
    """Substitute ``$1``..``$9``, ``$@`` / ``$ARGUMENTS`` (all arguments) in a template body."""
    args = _split_args(args_text)

    def positional(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1
        return args[index] if 0 <= index < len(args) else ""

    text = template.content.replace("$ARGUMENTS", args_text.strip()).replace("$@", args_text.strip())
    return re.sub(r"\$(\d)", positional, text)


def _split_args(text: str) -> list[str]:
    import shlex

    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def expand_skill(skill: Skill, args_text: str) -> str:
    """``/skill:name args`` -> the skill's instructions wrapped for the model."""
    try:
        body = parse_front_matter(Path(skill.path).read_text("utf-8"))[1]
    except OSError as exc:
        body = f"(could not read {skill.path}: {exc})"
    text = (
        f'<skill name="{skill.name}" location="{skill.path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body.strip()}\n</skill>"
    )
    if args_text.strip():
        text += f"\n\n{args_text.strip()}"
    return text
