"""``/settings``: the everyday settings as a form (switches, choices, numbers, text).

Ctrl+S or the Save button answers the changed values (checked first: a bad number is
shown and nothing is saved); Esc cancels.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static, Switch

from ...interactive.settings_form import SettingField, parse_value
from .dialog_base import TimedDialog


class SettingsForm(TimedDialog[Any]):
    BINDINGS = [*TimedDialog.BINDINGS, Binding("ctrl+s", "save", show=False, priority=True)]
    BOX_CLASSES = "dialog-box dialog-wide settings-form"

    def __init__(self, fields: list[SettingField], values: dict[str, Any]) -> None:
        super().__init__("Settings")
        self.fields = fields
        self.values = values
        self.inputs: dict[str, Widget] = {}
        self.error = Static("", classes="dialog-message settings-error", markup=False)

    def _widget(self, field: SettingField) -> Widget:
        value = self.values.get(field.key)
        widget_id = "setting-" + field.key.replace(".", "-")
        if field.kind == "bool":
            return Switch(value=bool(value), id=widget_id)
        if field.kind == "choice":
            options = [(c, c) for c in field.choices]
            return Select(options, value=value if value in field.choices else Select.BLANK, allow_blank=False,
                          id=widget_id)
        return Input(value="" if value is None else str(value), id=widget_id)

    def body(self):  # type: ignore[no-untyped-def]
        with VerticalScroll(classes="settings-rows"):
            for field in self.fields:
                widget = self.inputs[field.key] = self._widget(field)
                with Horizontal(classes="settings-row"):
                    yield Label(field.label, classes="settings-label")
                    yield widget
                    yield Static(field.help, classes="settings-help", markup=False)
        yield self.error
        with Horizontal(classes="dialog-buttons"):
            yield Button("Save (Ctrl+S)", id="save", variant="primary")
            yield Button("Cancel (Esc)", id="cancel")

    def first_focus(self) -> Widget | None:
        return next(iter(self.inputs.values()), None)

    def changes(self) -> dict[str, Any]:
        """The values that differ from the start; ValueError names the first bad one."""
        out: dict[str, Any] = {}
        for field in self.fields:
            widget = self.inputs[field.key]
            raw = widget.value  # type: ignore[attr-defined]
            value = parse_value(field, raw)
            if value != self.values.get(field.key):
                out[field.key] = value
        return out

    def action_save(self) -> None:
        try:
            changed = self.changes()
        except ValueError as exc:
            self.error.update(str(exc))
            return
        self.close(changed)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()
