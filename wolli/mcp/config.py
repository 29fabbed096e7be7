"""Reading MCP server definitions in Claude Code's ``.mcp.json`` shape.

``{"mcpServers": {name: {"command", "args", "env", "cwd"} | {"type": "http", "url",
"headers"} | {"type": "sse", "url", "headers"}}}``. Strings in ``command``, ``args``,
``env``, ``cwd``, ``url`` and ``headers`` expand ``${VAR}`` and ``${VAR:-default}`` from the
environment; a variable that is unset and has no default makes that one server unusable
(reported, the others load). Problems come back as one line each, naming the file.

Where servers come from, in order (a later definition of the same name replaces an
earlier one): the agent home's ``mcp.json``, the project's ``.mcp.json`` (once approved,
see :mod:`.approval`), then each ``--mcp-config`` file; ``--strict-mcp-config`` keeps only
the last group. Extensions add theirs at run time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.json_input import parse_json
from ..base.safe_files import read_text_capped
from ..config.errors import config_error, json_syntax_error, locate
from .types import Scope, ServerConfig

# A config file larger than this is refused (every read is bounded).
MAX_CONFIG_BYTES = 1024 * 1024
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http",
               "streamable_http": "http", "sse": "sse"}
NAME_RULE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass
class ConfigFile:
    """One file's servers and problems."""

    path: str
    servers: list[ServerConfig] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    text: str = ""  # as read (the project approval hashes it)


class MissingVariable(ValueError):
    pass


def expand(value: str, environ: Mapping[str, str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` replaced; an unset ``VAR`` without default raises."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found is not None and (found != "" or default is None):
            return found
        if default is not None:
            return default
        raise MissingVariable(name)

    return _VAR.sub(one, value)


def load_file(path: Path, scope: Scope, environ: Mapping[str, str] | None = None) -> ConfigFile:
    """The servers of one file ({} when it does not exist)."""
    out = ConfigFile(str(path))
    try:
        out.text = read_text_capped(path, MAX_CONFIG_BYTES)  # a regular file only: a repo's FIFO cannot hang us
    except FileNotFoundError:
        return out
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        out.errors.append(config_error(path, f"could not read it ({exc})", hint="no MCP servers from it"))
        return out
    return parse_text(out.text, str(path), scope, environ, out)


def parse_text(text: str, where: str, scope: Scope, environ: Mapping[str, str] | None = None,
               out: ConfigFile | None = None) -> ConfigFile:
    out = out or ConfigFile(where, text=text)
    if not text.strip():
        return out
    try:
        data = parse_json(text)
    except json.JSONDecodeError as exc:
        out.errors.append(json_syntax_error(where, exc, "no MCP servers from it until it is fixed"))
        return out
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        out.errors.append(config_error(where, 'needs an object "mcpServers": {name: {...}}', line=1,
                                       hint="no MCP servers from it"))
        return out
    env = os.environ if environ is None else environ
    for name, raw in servers.items():
        try:
            out.servers.append(parse_server(name, raw, scope, where, env))
        except ValueError as exc:
            out.errors.append(config_error(where, str(exc), line=locate(text, f"mcpServers.{name}"),
                                           field=f"mcpServers.{_shown(name)}", hint="this server is left out"))
    return out


def _shown(name: str) -> str:
    return name if name.isprintable() and len(name) <= 80 else json.dumps(name[:80])


def _strings(value: object, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return list(value)


def _mapping(value: object, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str | int | float | bool) for v in value.values()):
        raise ValueError(f"{what} must be an object of strings")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def parse_server(name: object, raw: object, scope: Scope, source: str, environ: Mapping[str, str]) -> ServerConfig:
    """One server entry; raises ValueError with a message a person can act on."""
    if not isinstance(name, str) or not NAME_RULE.match(name):
        raise ValueError("a server name uses 1-64 letters, digits, '_', '-' or '.'")
    if not isinstance(raw, dict):
        raise ValueError("must be an object with \"command\" or \"url\"")
    kind = raw.get("type") or raw.get("transport")
    if kind is None:
        kind = "stdio" if "command" in raw else "http" if "url" in raw else None
    if kind is None:
        raise ValueError("needs a \"command\" (a stdio server) or a \"url\" (http or sse)")
    transport = _TRANSPORTS.get(kind) if isinstance(kind, str) else None
    if transport is None:
        raise ValueError(f"unknown type {kind!r}: use stdio (a \"command\"), http or sse (a \"url\")")
    try:
        if transport == "stdio":
            command = raw.get("command")
            if not isinstance(command, str) or not command.strip():
                raise ValueError("a stdio server needs a \"command\"")
            cwd = raw.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                raise ValueError("cwd must be a string")
            return ServerConfig(
                name=name, transport="stdio", command=expand(command, environ),
                args=tuple(expand(a, environ) for a in _strings(raw.get("args"), "args")),
                env=tuple((k, expand(v, environ)) for k, v in _mapping(raw.get("env"), "env").items()),
                cwd=os.path.expanduser(expand(cwd, environ)) if cwd else None,
                scope=scope, source=source,
            )
        url = raw.get("url")
        if not isinstance(url, str) or not url.strip():
            raise ValueError(f"an {transport} server needs a \"url\"")
        url = expand(url, environ)
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, not {url[:40]!r}")
        found = raw.get("oauth")
        oauth: dict[str, Any] = found if isinstance(found, dict) else {}
        return ServerConfig(
            name=name, transport=transport, url=url,  # type: ignore[arg-type]
            headers=tuple((k, expand(v, environ)) for k, v in _mapping(raw.get("headers"), "headers").items()),
            scope=scope, source=source,
            oauth_client_id=oauth.get("clientId") if isinstance(oauth.get("clientId"), str) else None,
            oauth_scopes=oauth.get("scopes") if isinstance(oauth.get("scopes"), str) else None,
            oauth_callback_port=_port(oauth.get("callbackPort")),
        )
    except MissingVariable as exc:
        raise ValueError(f"the environment variable {exc} is not set (write ${{{exc}:-default}} for a default)") from None


def _port(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 1024 <= value <= 65535:
        raise ValueError("oauth.callbackPort must be a port number from 1024 to 65535")
    return value


def load_cli_config(value: str, environ: Mapping[str, str] | None = None) -> ConfigFile:
    """``--mcp-config``: a file, or the JSON text itself (as Claude Code accepts)."""
    if value.lstrip().startswith("{"):
        return parse_text(value, "--mcp-config", "cli", environ)
    return load_file(Path(value).expanduser(), "cli", environ)


def merge(groups: list[list[ServerConfig]]) -> list[ServerConfig]:
    """Later groups replace servers of the same name; the order of first appearance stays."""
    by_name: dict[str, ServerConfig] = {}
    for group in groups:
        for server in group:
            by_name[server.name] = server
    return list(by_name.values())
