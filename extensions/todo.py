"""Todo list tool whose state follows the session: rebuilt on start, resume, fork and reload.

Shows: ``register_tool`` with a pydantic parameter model, state kept in the result's
``details`` (so every branch has its own list), ``session_start`` reconstruction from
``ctx.session.session_manager.get_branch()``, and a ``/todos`` command with ``ctx.ui.notify``.
"""

from typing import Literal

from pydantic import BaseModel


class TodoParams(BaseModel):
    action: Literal["list", "add", "done"]
    text: str = ""


def extension(wolli):
    items: list[dict] = []

    def rebuild(event, ctx):
        items.clear()
        for entry in ctx.session.session_manager.get_branch():
            message = getattr(entry, "message", None)
            if getattr(message, "role", None) == "toolResult" and message.tool_name == "todo" and message.details:
                items[:] = [dict(item) for item in message.details.get("items", [])]

    def execute(tool_call_id, params, signal, on_update, ctx):
        if params.action == "add":
            if not params.text.strip():
                raise ValueError("add needs a text")
            items.append({"text": params.text, "done": False})
        elif params.action == "done":
            match = next((i for i in items if i["text"] == params.text and not i["done"]), None)
            if match is None:
                raise ValueError(f"no open todo {params.text!r}")
            match["done"] = True
        listing = "\n".join(f"[{'x' if i['done'] else ' '}] {i['text']}" for i in items) or "(no todos)"
        return {"content": [{"type": "text", "text": listing}], "details": {"items": [dict(i) for i in items]}}

    wolli.on("session_start", rebuild)
    wolli.on("session_tree", rebuild)
    wolli.register_tool({
        "name": "todo",
        "label": "Todo",
        "description": "Keep a todo list: action 'list', 'add' (with text) or 'done' (with the text of an item).",
        "parameters": TodoParams,
        "execute": execute,
        "prompt_snippet": "Track multi-step work in a todo list",
        "prompt_guidelines": ["Use todo to plan work with more than three steps, and mark items done as you go."],
    })

    def show(args, ctx):
        open_items = [i["text"] for i in items if not i["done"]]
        ctx.ui.notify("open: " + (", ".join(open_items) or "nothing"))

    wolli.register_command("todos", handler=show, description="Show the open todos")
