"""The permission question in the line mode: the call in scrollback, then a numbered choice.

The exact call goes into the scrollback first (it stays there as a record of what was
allowed), then the options as a numbered list (``1`` allow once ...). Choosing an "always"
option asks for the rule to save, pre-filled with the narrowest one and editable; "deny
with a message" asks for the message. Esc, Ctrl+C or an empty answer denies.
"""

from __future__ import annotations

from ...ai.abort import AbortSignal
from ...permissions.prompt import REJECT_WITH_MESSAGE, PermissionAnswer, PermissionRequest, shown
from ...permissions.rules import split_rule_list
from .output import LineOutput
from .prompts import Prompter


async def ask_permission(output: LineOutput, prompter: Prompter, request: PermissionRequest, *,
                         signal: AbortSignal | None = None) -> PermissionAnswer:
    call = request.tool_call
    lines = [f"{output.marker('tool')} Allow {call.title}?  ({shown(request.reason)})"]
    lines += [f"  {line}" for line in call.detail.split("\n")]
    output.print_line("\n".join(output.fg("warning", line) if i == 0 else line for i, line in enumerate(lines)),
                      separate=True)
    labels = [o.name for o in request.options]
    index = await prompter.choose("Allow it?", labels, signal=signal)
    if index is None:
        return PermissionAnswer.cancelled()
    option = request.options[index]
    if option.kind in ("allow_always", "reject_always"):
        text = await prompter.text("Rule to save (edit it, Enter saves):", default=", ".join(request.suggested_rules),
                                   signal=signal)
        if text is None:
            return PermissionAnswer.cancelled()
        return PermissionAnswer(option.option_id, option.kind, tuple(split_rule_list(text)) or request.suggested_rules)
    if option.option_id == REJECT_WITH_MESSAGE:
        message = await prompter.text("What should the model do instead?", signal=signal)
        return PermissionAnswer(option.option_id, option.kind, (), (message or "").strip() or None)
    return PermissionAnswer(option.option_id, option.kind)
