"""The permission question in the full-screen app: the exact call, why, and the answers.

Keys: ``y`` allow once, ``a`` allow always, ``n`` deny (and stop the turn), ``m`` deny with
a message for the model, ``d`` deny always; or arrows and Enter. The rule an "always" answer
saves is shown in a field under the options and can be edited first (Tab to it; Enter there
allows always). Esc, or the agent being stopped, denies. Everything shown comes from the
model, so it is drawn as plain text.
"""

from __future__ import annotations

from typing import Unpack

from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ....permissions.prompt import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    REJECT_ALWAYS,
    REJECT_ONCE,
    REJECT_WITH_MESSAGE,
    PermissionAnswer,
    PermissionRequest,
    shown,
)
from ....permissions.rules import split_rule_list
from .dialog_base import DialogOptions, TimedDialog

_KEYS = {ALLOW_ONCE: "y", ALLOW_ALWAYS: "a", REJECT_ONCE: "n", REJECT_WITH_MESSAGE: "m", REJECT_ALWAYS: "d"}


class PermissionDialog(TimedDialog[PermissionAnswer]):
    BINDINGS = [
        *TimedDialog.BINDINGS,
        *(Binding(key, f"pick('{option}')", show=False) for option, key in _KEYS.items()),
    ]
    BOX_CLASSES = "dialog-box dialog-wide permission-box"

    def __init__(self, request: PermissionRequest, **kwargs: Unpack[DialogOptions]) -> None:
        call = request.tool_call
        super().__init__(shown(f"Allow {call.title}?"), cancel_value=PermissionAnswer.cancelled(), **kwargs)
        self.request = request
        self.choices = OptionList(
            *[Option(f"{_KEYS.get(o.option_id, ' ')}  {o.name}", id=o.option_id) for o in request.options],
            id="permission-options")
        self.choices.highlighted = 0
        self.rule_field = Input(value=", ".join(request.suggested_rules), id="permission-rule",
                                placeholder="rules to save, e.g. Bash(git diff:*)")
        self.message_field = Input(placeholder="what the model should do instead (Enter sends)", id="permission-message")
        self.detail = Static(call.detail, markup=False, id="permission-detail")

    def body(self):  # type: ignore[no-untyped-def]
        yield Static(shown(f"Why: {self.request.reason} (mode {self.request.mode})"), id="permission-why",
                     markup=False)
        with VerticalScroll(id="permission-call"):
            yield self.detail
        yield self.choices
        with Horizontal(classes="permission-field-row"):
            yield Static("“Always” saves:", classes="permission-field-label", markup=False)
            yield self.rule_field
        with Horizontal(classes="permission-field-row") as row:
            row.display = False
            yield Static("Message:", classes="permission-field-label", markup=False)
            yield self.message_field
        yield Static("y a n m d or ↑↓ Enter · Tab: edit the rule, Enter: allow always · Esc: deny",
                     id="permission-keys", markup=False)

    def first_focus(self) -> OptionList:
        return self.choices

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_pick(event.option.id or REJECT_ONCE)

    def action_pick(self, option_id: str) -> None:
        if self.focused is self.message_field or self.focused is self.rule_field:
            return  # the letters are being typed into a field
        option = self.request.option(option_id)
        if option is None:
            return
        if option_id == REJECT_WITH_MESSAGE:
            row = self.message_field.parent
            if row is not None:
                row.display = True  # type: ignore[attr-defined]
            self.message_field.focus()
            return
        rules: tuple[str, ...] = ()
        if option.kind in ("allow_always", "reject_always"):
            rules = tuple(split_rule_list(self.rule_field.value)) or self.request.suggested_rules
        self.close(PermissionAnswer(option.option_id, option.kind, rules))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input is self.message_field:
            option = self.request.option(REJECT_WITH_MESSAGE)
            if option is not None:
                self.close(PermissionAnswer(option.option_id, option.kind, (), event.value.strip() or None))
            return
        option = self.request.option(ALLOW_ALWAYS)
        if option is not None:
            rules = tuple(split_rule_list(event.value)) or self.request.suggested_rules
            self.close(PermissionAnswer(option.option_id, option.kind, rules))
