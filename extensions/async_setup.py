"""Async set-up: an ``async def extension`` that reads its configuration before any session.

Shows: the factory awaited before the first ``session_start`` (so handlers can rely on the
loaded config), a setting read with ``wolli.settings.get`` and written with ``update``,
the extension logger, and ``register_tool`` with a JSON-schema dict (validated as JSON
schema, handed to ``execute`` as a plain dict).
"""

import asyncio
import json
from pathlib import Path


async def extension(wolli):
    path = Path(wolli.settings.get("glossary.path") or Path(wolli.cwd) / "glossary.json")
    glossary = await asyncio.to_thread(lambda: json.loads(path.read_text()) if path.exists() else {})
    wolli.logger.info("glossary: %d terms from %s", len(glossary), path)

    def define(tool_call_id, params, signal, on_update, ctx):
        term = params["term"].lower()
        if term not in glossary:
            raise KeyError(f"{params['term']!r} is not in the glossary ({', '.join(sorted(glossary)) or 'empty'})")
        return glossary[term]

    def learn(args, ctx):
        term, _, meaning = args.partition("=")
        glossary[term.strip().lower()] = meaning.strip()
        path.write_text(json.dumps(glossary, indent=2))
        wolli.settings.update({"glossary": {"path": str(path)}})

    wolli.register_tool({
        "name": "glossary",
        "description": "Look up a project term in the team glossary.",
        "parameters": {"type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]},
        "execute": define,
    })
    wolli.register_command("learn", handler=learn, description="Add a glossary term: /learn term = meaning")
    wolli.on("session_start", lambda event, ctx: ctx.ui.notify(f"glossary: {len(glossary)} terms"))
