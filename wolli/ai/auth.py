"""API keys: ``auth.json`` (mode 0600), environment variables and key commands.

A stored value may be a literal key, the NAME of an environment variable (all caps, and
set), or ``!command`` whose stdout is the key (a password manager, ``pass``, ``op read``).
Commands run once per process and are cached, so a slow vault is asked only once.
Resolution order for :meth:`AuthStorage.get_api_key`: explicit override, runtime key
(``--api-key``), ``auth.json``, environment variables, then the provider's ``apiKey`` in
``models.json`` (supplied by :class:`~wolli.ai.models.ModelRegistry` as a fallback).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base.json_input import parse_json
from ..base.safe_files import CONFIG_FILE_LIMIT, read_text_capped
from ..config.errors import json_syntax_error
from ..config.file_lock import locked
from ..config.paths import auth_path, ensure_private_dir
from .env_keys import env_var_for, get_env_api_key
from .redact import remember_secret

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_command_cache: dict[str, str] = {}
_command_lock = threading.Lock()

DEFAULT_COMMAND_TIMEOUT = 15.0


class AuthError(RuntimeError):
    """A configured key could not be produced (failed command, unwritable file...)."""


def clear_command_cache() -> None:
    """Forget the output of ``!command`` keys (after the user rotates a key)."""
    with _command_lock:
        _command_cache.clear()


def is_key_reference(value: str) -> bool:
    """True when ``value`` is a ``!command`` or an environment variable name that is set."""
    text = value.strip()
    return text.startswith("!") or (bool(_ENV_NAME.match(text)) and text in os.environ)


def resolve_key_value(value: str, *, what: str = "key", timeout: float = DEFAULT_COMMAND_TIMEOUT) -> str | None:
    """Turn a stored value into a key: literal, ``ENV_NAME`` (if set) or ``!command``.

    ``what`` names the value's origin in error messages ("auth.json entry for 'openai'").
    Raises :class:`AuthError` when a command fails, times out or prints nothing.
    """
    text = value.strip()
    if not text:
        return None
    if text.startswith("!"):
        key: str | None = _run_key_command(text[1:].strip(), what, timeout)
    elif _ENV_NAME.match(text) and text in os.environ:
        key = os.environ[text].strip() or None
    else:
        key = text
    remember_secret(key)  # whatever its source, a resolved key is never printed or stored
    return key


def _run_key_command(command: str, what: str, timeout: float) -> str:
    if not command:
        raise AuthError(f"{what}: '!' must be followed by a shell command that prints the key")
    with _command_lock:
        cached = _command_cache.get(command)
    if cached is not None:
        return cached
    try:
        # A new session lets a timeout kill the whole pipeline, not just the shell.
        proc = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as exc:
        raise AuthError(f"{what}: could not start the key command `{command}`: {exc}") from exc
    try:
        out, err = _bounded_output(proc, timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise AuthError(
            f"{what}: the key command `{command}` did not finish within {timeout:g}s; "
            "check that it runs without prompting"
        ) from None
    except _TooMuchOutput:
        _kill_group(proc)
        raise AuthError(
            f"{what}: the key command `{command}` printed more than {KEY_OUTPUT_LIMIT // 1024} KB; "
            "a key command prints the key and nothing else"
        ) from None
    if proc.returncode != 0:
        detail = (err or "").strip().splitlines()
        tail = f": {detail[-1]}" if detail else ""
        raise AuthError(f"{what}: the key command `{command}` failed with exit code {proc.returncode}{tail}")
    key = (out or "").strip()
    if not key:
        raise AuthError(f"{what}: the key command `{command}` printed nothing")
    with _command_lock:
        _command_cache[command] = key
    return key


# A key command prints a key: anything near this much is a mistake (``yes``, a whole file).
KEY_OUTPUT_LIMIT = 64 * 1024


class _TooMuchOutput(Exception):
    pass


def _bounded_output(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """stdout and stderr of ``proc`` within ``timeout``, each at most ``KEY_OUTPUT_LIMIT``
    characters (``communicate`` would hold whatever the command prints)."""
    import time

    streams = {"out": proc.stdout, "err": proc.stderr}
    chunks: dict[str, list[str]] = {"out": [], "err": []}
    sizes = {"out": 0, "err": 0}

    def drain(name: str) -> None:
        stream = streams[name]
        assert stream is not None
        while True:
            piece = stream.read(4096)
            if not piece:
                return
            chunks[name].append(piece)
            sizes[name] += len(piece)
            if sizes[name] > KEY_OUTPUT_LIMIT:
                return  # enough: the command is killed, not read to its end

    readers = [threading.Thread(target=drain, args=(name,), daemon=True) for name in streams]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    while any(reader.is_alive() for reader in readers):
        if sizes["out"] > KEY_OUTPUT_LIMIT or sizes["err"] > KEY_OUTPUT_LIMIT:
            raise _TooMuchOutput()
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        readers[0].join(0.01)
    if sizes["out"] > KEY_OUTPUT_LIMIT or sizes["err"] > KEY_OUTPUT_LIMIT:
        raise _TooMuchOutput()
    proc.wait(max(0.0, deadline - time.monotonic()))
    return "".join(chunks["out"]), "".join(chunks["err"])


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(Exception):
        proc.communicate(timeout=2)


def _entry_value(entry: object) -> str | None:
    """The stored value of one auth.json entry, or None if its shape is not a key."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and entry.get("type", "api_key") == "api_key":
        key = entry.get("key")
        return key if isinstance(key, str) else None
    return None


def _tighten(path: Path, mode: int) -> str | None:
    """auth.json holds keys: wider than 0600 is reported and narrowed to 0600 at once."""
    wide = mode & 0o077
    if not wide:
        return None
    shown = f"{mode & 0o777:04o}"
    try:
        os.chmod(path, 0o600)
    except OSError as exc:
        return (f"{path} is readable by others (mode {shown}) and could not be changed ({exc.strerror or exc}); "
                f"run: chmod 600 {path}")
    return f"{path} was readable by others (mode {shown}); its mode is now 0600 (keys are for your eyes only)"


class AuthStorage:
    """Reads and writes ``WOLLI_HOME/auth.json`` and resolves provider keys.

    The file is re-read when it changes on disk, so a key saved by another Wolli process
    is picked up without a restart. A malformed file sets :attr:`load_error` and acts as
    empty; writing refuses to replace it so nothing the user typed is lost.
    """

    def __init__(self, path: Path | str | None = None, *, command_timeout: float = DEFAULT_COMMAND_TIMEOUT):
        self.path = Path(path).expanduser() if path is not None else auth_path()
        self.command_timeout = command_timeout
        self.load_error: str | None = None
        # Set when the file was readable by others: what was found and what was done.
        self.mode_note: str | None = None
        self._data: dict[str, Any] = {}
        self._stamp: tuple[int, int] | None = None
        self._runtime: dict[str, str] = {}
        self._fallback: Callable[[str], str | None] | None = None
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ reading

    def reload(self) -> None:
        """Re-read the file now (normally done automatically when it changes)."""
        with self._lock:
            self._stamp = None
            self._current()

    def _current(self) -> dict[str, Any]:
        with self._lock:
            try:
                st = self.path.stat()
            except FileNotFoundError:
                self._data, self._stamp, self.load_error = {}, None, None
                return self._data
            except OSError as exc:
                self._data, self._stamp = {}, None
                self.load_error = f"{self.path}: cannot read ({exc.strerror or exc})"
                return self._data
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp != self._stamp:
                self._data, self.load_error = self._parse()
                self._stamp = stamp
                self.mode_note = _tighten(self.path, st.st_mode)
            return self._data

    def _parse(self) -> tuple[dict[str, Any], str | None]:
        try:
            text = read_text_capped(self.path, CONFIG_FILE_LIMIT)
        except (OSError, UnicodeDecodeError) as exc:
            return {}, f"{self.path}: cannot read ({exc}); using no stored keys"
        if not text.strip():
            return {}, None
        try:
            data = parse_json(text)
        except json.JSONDecodeError as exc:
            return {}, json_syntax_error(self.path, exc, "stored keys are ignored until the file is fixed")
        if not isinstance(data, dict):
            return {}, f"{self.path}: expected a JSON object mapping provider names to keys; ignoring it"
        for entry in data.values():
            value = _entry_value(entry)
            if value is not None and not is_key_reference(value):
                remember_secret(value)
        bad = sorted(name for name, entry in data.items() if _entry_value(entry) is None)
        problem = None
        if bad:
            problem = (
                f"{self.path}: ignoring entries {', '.join(repr(b) for b in bad)}: each value must be a "
                'string or {"type": "api_key", "key": "..."}'
            )
        return data, problem

    @property
    def errors(self) -> list[str]:
        """Problems with auth.json (read now if it was not yet): one line each, naming the file."""
        self._current()
        return [note for note in (self.mode_note, self.load_error) if note]

    def list_providers(self) -> list[str]:
        """Providers with a usable entry in auth.json."""
        return sorted(name for name, entry in self._current().items() if _entry_value(entry) is not None)

    def has_auth(self, provider: str) -> bool:
        """Whether a key is configured for ``provider``, without running any command."""
        if provider in self._runtime:
            return True
        if _entry_value(self._current().get(provider)) is not None:
            return True
        if get_env_api_key(provider) is not None:
            return True
        return bool(self._fallback_value(provider))

    def key_source(self, provider: str) -> str | None:
        """Where the key for ``provider`` would come from: 'runtime', 'auth.json',
        'env:NAME', 'models.json', or None."""
        if provider in self._runtime:
            return "runtime"
        if _entry_value(self._current().get(provider)) is not None:
            return "auth.json"
        name = env_var_for(provider)
        if name:
            return f"env:{name}"
        return "models.json" if self._fallback_value(provider) else None

    def get_api_key(self, provider: str, override: str | None = None) -> str | None:
        """The key to send for ``provider``, or None when none is configured.

        Raises :class:`AuthError` when a configured ``!command`` fails.
        """
        if override:
            return override
        runtime = self._runtime.get(provider)
        if runtime:
            return runtime
        stored = _entry_value(self._current().get(provider))
        if stored is not None:
            key = resolve_key_value(stored, what=f"auth.json entry for '{provider}'", timeout=self.command_timeout)
            if key:
                return key
        env_key = get_env_api_key(provider)
        if env_key:
            return env_key
        fallback = self._fallback_value(provider)
        if fallback:
            return resolve_key_value(fallback, what=f"models.json apiKey for '{provider}'", timeout=self.command_timeout)
        return None

    # ------------------------------------------------------------------ runtime

    def set_runtime_api_key(self, provider: str, key: str | None) -> None:
        """Use ``key`` for ``provider`` in this process only (``--api-key``); None clears it."""
        if key:
            remember_secret(key)
            self._runtime[provider] = key
        else:
            self._runtime.pop(provider, None)

    def set_fallback_resolver(self, resolver: Callable[[str], str | None] | None) -> None:
        """Last-resort raw value per provider (the model registry passes models.json ``apiKey``)."""
        self._fallback = resolver

    def _fallback_value(self, provider: str) -> str | None:
        if self._fallback is None:
            return None
        value = self._fallback(provider)
        return value if isinstance(value, str) and value.strip() else None

    # ------------------------------------------------------------------ writing

    def set_api_key(self, provider: str, key: str) -> None:
        """Store ``key`` (a literal, ENV name or ``!command``) for ``provider``."""
        if not isinstance(provider, str) or not provider.strip():
            raise ValueError("provider name must be a non-empty string")
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"the key for '{provider}' must be a non-empty string")
        with self._lock, locked(self.path):  # threads, then other processes
            data = self._writable_data()
            data[provider.strip()] = {"type": "api_key", "key": key.strip()}
            self._write(data)

    def remove(self, provider: str) -> bool:
        """Delete ``provider``'s entry; returns whether there was one."""
        with self._lock, locked(self.path):
            data = self._writable_data()
            if provider not in data:
                return False
            del data[provider]
            self._write(data)
            return True

    def _writable_data(self) -> dict[str, Any]:
        self._stamp = None
        data = self._current()
        if self.load_error and not data and self.path.exists():
            raise AuthError(f"{self.load_error}. Fix or delete the file before saving keys; it was left unchanged.")
        return dict(data)

    def _write(self, data: dict[str, Any]) -> None:
        """Atomic replace; the temp file is created 0600 so the key is never exposed."""
        directory = self.path.parent
        try:
            ensure_private_dir(directory)
            import tempfile  # with the first write (not on every start)

            fd, tmp = tempfile.mkstemp(prefix=".auth.", suffix=".tmp", dir=directory)  # mode 0600
        except OSError as exc:
            raise AuthError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise AuthError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
            raise
        self._stamp = None
        self._current()
