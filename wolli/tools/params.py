"""The built-in tools' parameter models: what the model's tool arguments are validated into.

Imported on a tool's first call, not at start-up (pydantic costs ~50 ms to import): the
first request sends the schemas written out in :mod:`wolli.tools.schemas`, which a test
keeps equal to what these models generate.
"""

from __future__ import annotations

from pydantic import AliasChoices, BaseModel, Field

from .schemas import FIND_LIMIT, GREP_LIMIT, LS_LIMIT


class ReadParams(BaseModel):
    path: str = Field(description="Path of the file to read (relative to the working directory, or absolute)")
    offset: int | None = Field(
        default=None, ge=1, description="Line number to start reading from (1-based)"
    )
    limit: int | None = Field(default=None, ge=1, description="Maximum number of lines to read")


class BashParams(BaseModel):
    command: str = Field(description="Bash command to execute")
    timeout: float | None = Field(
        default=None, description="Timeout in seconds (optional; no timeout by default)"
    )


class EditBlock(BaseModel):
    old_text: str = Field(
        description="Exact text to replace; it must occur exactly once in the original file"
    )
    new_text: str = Field(description="Text to put in its place")


class EditParams(BaseModel):
    path: str = Field(description="Path of the file to edit (relative to the working directory, or absolute)")
    edits: list[EditBlock] = Field(
        min_length=1,
        description="One or more replacements, each matched against the original file; "
        "they must not overlap",
    )


class WriteParams(BaseModel):
    path: str = Field(description="Path of the file to write (relative to the working directory, or absolute)")
    content: str = Field(description="The complete content to write to the file")


class GrepParams(BaseModel):
    pattern: str = Field(description="Regular expression to search for (or plain text with literal=true)")
    path: str | None = Field(
        default=None, description="Directory or file to search (default: the working directory)"
    )
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'",
    )
    ignore_case: bool = Field(
        default=False,
        validation_alias=AliasChoices("ignore_case", "ignoreCase"),
        description="Case-insensitive search",
    )
    literal: bool = Field(default=False, description="Treat the pattern as plain text, not a regex")
    context: int = Field(default=0, ge=0, le=100, description="Lines of context before and after each match")
    limit: int = Field(default=GREP_LIMIT, ge=1, description=f"Maximum number of matches (default {GREP_LIMIT})")


class FindParams(BaseModel):
    pattern: str = Field(
        description="Glob to match, e.g. '*.py', '**/test_*.py', 'src/**/*.ts' or 'docs/' (directories)"
    )
    path: str | None = Field(
        default=None, description="Directory to search in (default: the working directory)"
    )
    limit: int = Field(default=FIND_LIMIT, ge=1, description=f"Maximum number of results (default {FIND_LIMIT})")


class LsParams(BaseModel):
    path: str | None = Field(
        default=None, description="Directory to list (default: the working directory)"
    )
    limit: int = Field(default=LS_LIMIT, ge=1, description=f"Maximum number of entries (default {LS_LIMIT})")
