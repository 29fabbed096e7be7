"""Who may talk to a server: where it listens, its bearer token, the files that say so.

The Unix socket is the owner's (mode 0600 in the agent home, itself the owner's); TCP needs
the token as the first line (``{"type": "auth", "token": T}``). The token is generated once,
stored 0600 in the agent home and printed only when it is made; ``--token`` replaces it for
one run. A listen address that is not loopback is refused without a token.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...base.json_input import parse_json

TOKEN_FILE = "server.token"
SOCKET_FILE = "server.sock"
INFO_FILE = "server.json"
# The protocol's own version (beside Wolli's): a client and server that differ cannot talk.
PROTOCOL_VERSION = 1
# sun_path is 108 bytes on Linux (104 on macOS): a longer socket path cannot be bound.
SOCKET_PATH_LIMIT = 104


class AccessError(ValueError):
    """A listen request that cannot (or must not) be served; the message says why."""


@dataclass(frozen=True)
class ListenAddress:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


def parse_listen(value: str) -> ListenAddress:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6; ``:PORT`` means 127.0.0.1)."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise AccessError(f"--listen: {value!r} is not HOST:PORT (e.g. 127.0.0.1:7433)")
    host = host.strip("[]") or "127.0.0.1"
    return ListenAddress(host, int(port_text))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: only what it resolves to, every address of it, counts
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return bool(infos) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def check_listen(address: ListenAddress, token: str | None) -> None:
    if token is None and not address.loopback:
        raise AccessError(
            f"--listen {address.host}:{address.port} is not a loopback address: anyone who reaches it could "
            "run commands on this machine, so a token is required (drop --no-auth, or listen on 127.0.0.1 "
            "and use SSH port forwarding; see docs/server.md)")


def token_matches(expected: str, given: object) -> bool:
    return isinstance(given, str) and hmac.compare_digest(expected.encode(), given.encode())


def load_or_create_token(home: Path) -> tuple[str, bool]:
    """The stored token, or a new one stored 0600; and whether it was made now."""
    path = home / TOKEN_FILE
    try:
        with open(path, encoding="utf-8") as file:
            token = file.read(4096).strip()
        if token:
            return token, False
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    write_private(path, token + "\n")
    return token, True


def read_token(home: Path) -> str | None:
    try:
        with open(home / TOKEN_FILE, encoding="utf-8") as file:
            return file.read(4096).strip() or None
    except OSError:
        return None


def write_private(path: Path, text: str) -> None:
    """Write ``text`` readable by the owner only (never briefly readable by others)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temp, path)


def socket_path(home: Path, given: str | None) -> Path:
    path = Path(given).expanduser().absolute() if given else home / SOCKET_FILE
    if len(os.fsencode(str(path))) >= SOCKET_PATH_LIMIT:
        raise AccessError(f"the socket path is too long for a Unix socket ({path}); give a shorter one with --socket")
    return path


def read_info(home: Path) -> dict[str, Any] | None:
    """What the running server wrote about itself (pid, version, socket), if anything."""
    try:
        with open(home / INFO_FILE, encoding="utf-8") as file:
            value = parse_json(file.read(65536))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
