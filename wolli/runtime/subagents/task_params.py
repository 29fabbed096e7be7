"""The ``task`` tool's parameter model, imported (with pydantic) on the tool's first call."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .catalog import GENERAL_PURPOSE


class TaskParams(BaseModel):
    subagent_type: str = Field(
        default=GENERAL_PURPOSE.name,
        description="The name of the subagent to hand the task to (one of those listed in this tool's description).",
    )
    description: str = Field(description="A short (3-5 word) label for the task, shown to the user.")
    prompt: str = Field(
        description="The task for the subagent, complete and self-contained: it sees nothing of this "
                    "conversation, only this text."
    )
