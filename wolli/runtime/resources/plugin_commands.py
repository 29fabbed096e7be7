"""A Claude Code plugin's ``commands/*.md`` as prompt templates.

Each command is ``/plugin:name`` always (Claude Code's namespaced spelling) and ``/name``
when no other template, skill command or earlier plugin has that name: on a clash the
namespaced spelling is the one that reaches it. Front matter ``description`` is kept;
``argument-hint``, ``allowed-tools`` and ``model`` are read by Claude Code only and ignored
here (docs/packages.md).
"""

from __future__ import annotations

from typing import Any

from .loading import PromptTemplate, ResourceSet, _first_line, _read_text, parse_front_matter


def add_plugin_commands(resources: ResourceSet, plugins: list[Any]) -> None:
    taken = {t.name for t in resources.prompts}
    for plugin in plugins:
        for path in plugin.command_files:
            text = _read_text(path, resources.errors)
            if text is None:
                continue
            meta, body = parse_front_matter(text)
            description = meta.get("description") or _first_line(body)
            for name in (f"{plugin.name}:{path.stem}", path.stem):
                if name in taken:
                    continue
                taken.add(name)
                resources.prompts.append(PromptTemplate(name, f"{description} ({plugin.name})", body, str(path)))
