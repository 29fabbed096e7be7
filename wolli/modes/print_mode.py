"""Headless modes: ``-p`` prints the final answer; ``--mode json`` streams every event.

Print mode: the final assistant text goes to stdout; errors go to stderr with exit code 1.
Piped stdin joins the prompt; ``@file`` arguments attach files (images as images) to the
first message; several message arguments are sent one after another.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from pathlib import Path
from typing import Any

from ..ai.types import AssistantMessage, ImageContent

_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}


class HeadlessError(Exception):
    """A problem to report on stderr (exit code 1)."""


def read_attachments(files: list[str], cwd: str) -> tuple[str, list[ImageContent]]:
    """``@file`` arguments -> (text block to prepend, images)."""
    parts: list[str] = []
    images: list[ImageContent] = []
    for name in files:
        path = Path(os.path.expanduser(name))
        if not path.is_absolute():
            path = Path(cwd) / path
        if not path.is_file():
            raise HeadlessError(f"@{name}: no such file")
        data = path.read_bytes()
        mime = _IMAGE_TYPES.get(path.suffix.lower())
        if mime:
            images.append(ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime))
            parts.append(f'<file name="{name}">(image attached)</file>')
            continue
        if b"\0" in data[:8192]:
            raise HeadlessError(f"@{name}: binary file; only text files and images can be attached")
        parts.append(f'<file name="{name}">\n{data.decode("utf-8", "replace")}\n</file>')
    return "\n".join(parts), images


def _read_stdin() -> str:
    if sys.stdin is None or sys.stdin.closed:
        return ""
    try:
        if sys.stdin.isatty():
            return ""
    except (ValueError, OSError):
        return ""
    try:
        return sys.stdin.read()
    except (OSError, ValueError):
        return ""


def _resolve_model(host: Any, args: Any) -> tuple[Any, str | None]:
    registry = host.model_registry
    if not args.model:
        if args.provider:
            for model in registry.available():
                if model.provider == args.provider:
                    return model, None
            raise HeadlessError(f"--provider {args.provider}: no available model (is its API key set?)")
        return None, None
    pattern = args.model
    if args.provider and "/" not in pattern:
        pattern = f"{args.provider}/{pattern}"
    try:
        return registry.resolve(pattern)
    except ValueError as exc:
        raise HeadlessError(str(exc)) from None


async def _run(args: Any, mode: str) -> int:
    from ..runtime.host import AgentHost
    from ..runtime.session import NoModelError
    from ..session.manager import SessionLookupError
    from ..session.store import SessionFileError

    cwd = os.getcwd()
    host = AgentHost(args.agent)
    for error in host.settings.errors:
        print(f"wolli: {error}", file=sys.stderr)
    if args.resume and not args.session:
        return _print_resume_list(host, cwd)

    model, model_level = _resolve_model(host, args)
    if args.api_key:
        if model is None:
            raise HeadlessError("--api-key needs --model (or --provider) to know which provider it is for")
        host.api_key_overrides[model.provider] = args.api_key

    if args.no_tools:
        active: list[str] | None = []
    elif args.tools:
        from ..runtime.builtin_tools import parse_tool_list

        active = parse_tool_list(args.tools)
    else:
        active = None
    try:
        session = host.create_session(
            cwd,
            persist=not args.no_session,
            continue_recent=args.continue_,
            session=args.session,
            model=model,
            thinking_level=args.thinking or model_level,
            active_tools=active,
            custom_system_prompt=args.system_prompt,
            append_system_prompt=args.append_system_prompt or "",
        )
    except (OSError, ValueError, SessionLookupError, SessionFileError) as exc:
        raise HeadlessError(str(exc)) from None
    if active:
        unknown = [name for name in active if name not in {t.name for t in session.all_tools}]
        if unknown:
            raise HeadlessError(f"--tools: unknown tool(s) {', '.join(unknown)}; known: "
                                f"{', '.join(t.name for t in session.all_tools)}")
    if session.model is None:
        raise NoModelError(host.no_model_help())
    provider = session.model.provider
    if provider not in host.api_key_overrides and not host.model_registry.is_available(session.model):
        raise HeadlessError(
            f"no API key for provider '{provider}' (model {session.model.key}).\n" + host.no_model_help()
        )

    attachments, images = read_attachments(args.files, cwd)
    stdin_text = _read_stdin()
    messages = list(args.messages)
    first = "\n\n".join(p for p in (attachments, stdin_text.strip(), messages[0] if messages else "") if p)
    # A blank message would reach the provider as an empty conversation (Anthropic drops
    # whitespace-only text, then rejects the request): treat it as no message at all.
    prompts = [p for p in (first, *messages[1:]) if p.strip()]
    if not prompts:
        raise HeadlessError('nothing to do: give a message, e.g. wolli -p "explain this repo"')

    writer = None
    if mode == "json":
        from .json_mode import JsonEventWriter

        # Nobody reads the events any more (``| head``): stop the run like an interrupt.
        writer = JsonEventWriter(on_closed=session.abort)
        writer.write(session.session_manager.get_header())
        session.subscribe(writer)
    interrupt = _Interrupt(session)
    with interrupt:
        for index, text in enumerate(prompts):
            if interrupt.signal_number is not None or (writer is not None and writer.closed):
                break
            await session.prompt(text, images if index == 0 else None)
    if interrupt.signal_number is not None:
        print("wolli: interrupted", file=sys.stderr)
        return 128 + interrupt.signal_number
    if writer is not None and writer.closed:
        return _BROKEN_PIPE
    last = next((m for m in reversed(session.messages) if isinstance(m, AssistantMessage)), None)
    if last is None:
        raise HeadlessError("the model gave no answer")
    if last.stop_reason in ("error", "aborted"):
        print(f"wolli: {last.error_message or last.stop_reason}", file=sys.stderr)
        return 1
    if mode == "print":
        text = last.text()
        try:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            sys.stdout.flush()
        except BrokenPipeError:  # ``wolli -p ... | head -1``: the reader has what it wanted
            from .json_mode import silence

            silence(sys.stdout)
            return _BROKEN_PIPE
    return 0


# The status a shell reports for a process ended by SIGPIPE.
_BROKEN_PIPE = 141


class _Interrupt:
    """SIGINT/SIGTERM abort the session instead of killing the process mid-write.

    The abort takes the normal path: the partial answer is saved as an ``aborted`` message,
    a running tool's process tree is killed, and the session file stays whole. (Without
    this, SIGTERM would leave a bash tool's processes, which run in their own session,
    orphaned.) A second signal cancels everything at once.
    """

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")

    def __init__(self, session: Any) -> None:
        self.session = session
        self.signal_number: int | None = None
        self._installed: list[int] = []
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> _Interrupt:
        import signal

        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        for name in self.SIGNALS:
            number = getattr(signal, name, None)
            if number is None:
                continue
            try:
                loop.add_signal_handler(number, self._on_signal, int(number))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
                continue
            self._installed.append(int(number))
        return self

    def _on_signal(self, number: int) -> None:
        if self.signal_number is None:
            self.signal_number = number
            self.session.abort()
        elif self._task is not None:
            self._task.cancel()  # a second signal: stop waiting for a clean abort

    def __exit__(self, *exc: object) -> None:
        loop = asyncio.get_running_loop()
        for number in self._installed:
            loop.remove_signal_handler(number)


def _print_resume_list(host: Any, cwd: str) -> int:
    sessions = host.list_sessions(cwd)
    if not sessions:
        print("No sessions to resume in this directory.", file=sys.stderr)
        return 1
    print("Sessions in this directory (newest first); resume one with --session ID:", file=sys.stderr)
    for info in sessions[:20]:
        label = info.name or (info.first_message or "").replace("\n", " ")[:60]
        print(f"  {info.id[:8]}  {info.modified:%Y-%m-%d %H:%M}  {label}", file=sys.stderr)
    return 1


def run_headless(args: Any, mode: str) -> int:
    import gc

    from ..runtime.session import NoModelError

    try:
        return asyncio.run(_run(args, mode))
    except (HeadlessError, NoModelError) as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("wolli: interrupted", file=sys.stderr)
        return 130
    finally:
        # The process ends next: spare the interpreter's shutdown a scan of every object
        # (measured ~30 ms of a ~300 ms print-mode run).
        gc.freeze()
