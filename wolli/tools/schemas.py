"""The JSON schemas of the built-in tools' parameters, written out.

The first request sends these without importing pydantic or the parameter models of
:mod:`wolli.tools.params` (loaded on a tool's first call); ``tests/unit/test_tool_schemas.py``
checks they equal what those models generate, so change both together.
"""

from __future__ import annotations

from typing import Any

GREP_LIMIT = 100
FIND_LIMIT = 1000
LS_LIMIT = 500

TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "read": {
        "properties": {
            "path": {
                "description": "Path of the file to read (relative to the working directory, or absolute)",
                "type": "string",
            },
            "offset": {
                "anyOf": [{"minimum": 1, "type": "integer"}, {"type": "null"}],
                "default": None,
                "description": "Line number to start reading from (1-based)",
            },
            "limit": {
                "anyOf": [{"minimum": 1, "type": "integer"}, {"type": "null"}],
                "default": None,
                "description": "Maximum number of lines to read",
            },
        },
        "required": ["path"],
        "type": "object",
    },
    "bash": {
        "properties": {
            "command": {
                "description": "Bash command to execute",
                "type": "string",
            },
            "timeout": {
                "anyOf": [{"type": "number"}, {"type": "null"}],
                "default": None,
                "description": "Timeout in seconds (optional; no timeout by default)",
            },
        },
        "required": ["command"],
        "type": "object",
    },
    "edit": {
        "properties": {
            "path": {
                "description": "Path of the file to edit (relative to the working directory, or absolute)",
                "type": "string",
            },
            "edits": {
                "description": "One or more replacements, each matched against the original file; they must not overlap",
                "items": {
                    "properties": {
                        "old_text": {
                            "description": "Exact text to replace; it must occur exactly once in the original file",
                            "type": "string",
                        },
                        "new_text": {
                            "description": "Text to put in its place",
                            "type": "string",
                        },
                    },
                    "required": ["old_text", "new_text"],
                    "type": "object",
                },
                "minItems": 1,
                "type": "array",
            },
        },
        "required": ["path", "edits"],
        "type": "object",
    },
    "write": {
        "properties": {
            "path": {
                "description": "Path of the file to write (relative to the working directory, or absolute)",
                "type": "string",
            },
            "content": {
                "description": "The complete content to write to the file",
                "type": "string",
            },
        },
        "required": ["path", "content"],
        "type": "object",
    },
    "grep": {
        "properties": {
            "pattern": {
                "description": "Regular expression to search for (or plain text with literal=true)",
                "type": "string",
            },
            "path": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Directory or file to search (default: the working directory)",
            },
            "glob": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'",
            },
            "ignore_case": {
                "default": False,
                "description": "Case-insensitive search",
                "type": "boolean",
            },
            "literal": {
                "default": False,
                "description": "Treat the pattern as plain text, not a regex",
                "type": "boolean",
            },
            "context": {
                "default": 0,
                "description": "Lines of context before and after each match",
                "maximum": 100,
                "minimum": 0,
                "type": "integer",
            },
            "limit": {
                "default": 100,
                "description": "Maximum number of matches (default 100)",
                "minimum": 1,
                "type": "integer",
            },
        },
        "required": ["pattern"],
        "type": "object",
    },
    "find": {
        "properties": {
            "pattern": {
                "description": "Glob to match, e.g. '*.py', '**/test_*.py', 'src/**/*.ts' or 'docs/' (directories)",
                "type": "string",
            },
            "path": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Directory to search in (default: the working directory)",
            },
            "limit": {
                "default": 1000,
                "description": "Maximum number of results (default 1000)",
                "minimum": 1,
                "type": "integer",
            },
        },
        "required": ["pattern"],
        "type": "object",
    },
    "ls": {
        "properties": {
            "path": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Directory to list (default: the working directory)",
            },
            "limit": {
                "default": 500,
                "description": "Maximum number of entries (default 500)",
                "minimum": 1,
                "type": "integer",
            },
        },
        "type": "object",
    },
}

