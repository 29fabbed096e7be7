"""Secrets never leave: every provider error is redacted where it is made.

A failed request becomes an assistant message whose ``error_message`` is printed on stderr,
sent as json/RPC events, stored in the session file and exported to HTML. Servers echo
what they were sent (a proxy's 401 page listing the request headers, a debug endpoint), and
a connection error names the URL, credentials included. So :class:`~.builder.MessageBuilder`
passes every error text through :func:`redact` before it is stored on the message: the one
boundary all providers (built-in and extension) go through.

What is known to be secret:

* the key and headers of the request itself, the ``user:password@`` of its base URL (also
  base64-encoded, as HTTP Basic auth sends it);
* every value :func:`remember_secret` was given: keys read from ``auth.json`` (and the output
  of ``!command`` keys), ``apiKey`` and ``headers`` values of ``models.json``;
* the environment's keys: the variables of :mod:`.env_keys` and any variable whose name ends
  in ``_API_KEY``, ``_KEY``, ``_TOKEN``, ``_SECRET`` or ``_PASSWORD``;
* credentials written in any URL (``scheme://user:password@host``), known or not.

Values shorter than :data:`MIN_SECRET_LENGTH` are not treated as secrets (a placeholder
``apiKey`` such as ``"none"`` must not blank out every "none" in a message); a URL's
password counts from four characters.
"""

from __future__ import annotations

import base64
import os
import re
import threading
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

from .env_keys import ENV_KEYS

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 8
_SECRET_NAME = re.compile(r"(_API_KEY|_KEY|_TOKEN|_SECRET|_PASSWORD)$")
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@:]+(?::[^\s/@]*)?@")

_lock = threading.Lock()
_remembered: set[str] = set()


def remember_secret(value: object) -> None:
    """Add a value that must never be printed or stored (a key, a header value)."""
    if isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH:
        with _lock:
            _remembered.add(value.strip())


def url_secrets(url: str | None) -> list[str]:
    """The credentials in ``url``: the password, ``user:password``, and its base64 form."""
    if not url or "@" not in url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    if parts.password is None:
        return []
    user, password = unquote(parts.username or ""), unquote(parts.password)
    pair = f"{user}:{password}"
    found = [pair, base64.b64encode(pair.encode("utf-8")).decode("ascii")]
    if len(password) >= 4:
        found.append(password)
        if parts.password != password:
            found.append(parts.password)  # as written in the URL (percent-encoded)
    return found


def _environment_secrets() -> list[str]:
    names = {name for names in ENV_KEYS.values() for name in names}
    return [value for name, value in os.environ.items() if name in names or _SECRET_NAME.search(name)]


def known_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """Every secret known now and ``extra`` (taken as given), longest first, so a key is
    replaced before any part of it."""
    with _lock:
        found = set(_remembered)
    found.update(v.strip() for v in _environment_secrets() if len(v.strip()) >= MIN_SECRET_LENGTH)
    found.update(v for v in extra if v)
    return sorted(found, key=len, reverse=True)


def request_secrets(api_key: str | None, headers: Iterable[dict[str, str] | None], base_url: str | None) -> list[str]:
    """What one request carries that is secret: its key, header values, URL credentials."""
    found: list[str] = [api_key] if api_key and len(api_key) >= MIN_SECRET_LENGTH else []
    for part in headers:
        found.extend(v for v in (part or {}).values() if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH)
    found.extend(url_secrets(base_url))
    return found


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret (and ``extra``) replaced by ``[REDACTED]``."""
    if not text:
        return text
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    for secret in known_secrets(extra):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


# An error message is one line of at most this many characters (a provider that sends a
# whole page of text, a stack trace or a JSON dump as its message is cut, with a mark).
ERROR_MESSAGE_LIMIT = 1000
_WHITESPACE = re.compile(r"\s+")


def clean_error(text: str, extra: Iterable[str | None] = ()) -> str:
    """An error text fit to show and store: secrets redacted, one line, capped."""
    flat = _WHITESPACE.sub(" ", redact(text or "", extra)).strip()
    if len(flat) > ERROR_MESSAGE_LIMIT:
        flat = flat[: ERROR_MESSAGE_LIMIT - 1].rstrip() + "…"
    return flat
