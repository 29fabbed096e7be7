"""Command line: ``wolli [options] [@files...] [messages...]`` -> picks a mode.

Parsing is hand-written (not argparse) because unknown ``--flags`` must survive for
extensions, which register their flags only after they load: ``--name=value`` keeps the
value, a bare ``--name`` is ``True``. Nothing heavy is imported before a mode runs, so
``wolli --version`` stays instant.
"""

from __future__ import annotations

import sys

HELP = """\
usage: wolli [options] [@files...] [messages...]

Modes:
  (default)                 full-screen TUI (not available in this version yet)
  -p, --print               answer once and print the final text
  --mode tui|print|json|rpc json: every event as one JSON line

Model:
  --model PROVIDER/ID[:THINKING]  model (fuzzy match on id), e.g. anthropic/claude-sonnet-4-5:high
  --provider NAME           provider for --model ID
  --api-key KEY             API key for this run (overrides auth.json and env vars)
  --thinking LEVEL          off, minimal, low, medium, high, xhigh
  --list-models [SEARCH]    list models you can use (those with a key) and exit

Session:
  -c, --continue            continue the most recent session in this directory
  -r, --resume              list sessions to resume (then use --session ID)
  --session PATH|ID         open a session file or id prefix
  --no-session              do not save this session
  --export SESSION [OUT]    write a session as a self-contained HTML file and exit

Agent:
  --agent NAME              agent home ~/.wolli/agents/NAME (default: $WOLLI_AGENT or "default")
  --tools LIST              active tools, comma-separated (read,bash,edit,write,grep,find,ls)
  --no-tools                no tools at all
  --system-prompt TEXT      replace the built-in system prompt opening
  --append-system-prompt TEXT  add text at the end of the system prompt

  -v, --version             print the version
  -h, --help                this help

@file attaches a file to the first message (images as images). Piped stdin joins the
prompt in print mode. Unknown --flags are kept for extensions.
"""


class UsageError(Exception):
    pass


class CliArgs:
    """Parsed options (a plain class: importing dataclasses would cost ~10 ms at start-up)."""

    def __init__(self) -> None:
        self.mode: str | None = None
        self.print_ = False
        self.agent: str | None = None
        self.provider: str | None = None
        self.model: str | None = None
        self.api_key: str | None = None
        self.thinking: str | None = None
        self.continue_ = False
        self.resume = False
        self.session: str | None = None
        self.no_session = False
        self.tools: str | None = None
        self.no_tools = False
        self.system_prompt: str | None = None
        self.append_system_prompt: str | None = None
        self.list_models: str | bool | None = None
        self.export: list[str] | None = None
        self.version = False
        self.help = False
        self.files: list[str] = []
        self.messages: list[str] = []
        self.extension_flags: dict[str, str | bool] = {}


_VALUE_FLAGS = {
    "--mode": "mode",
    "--agent": "agent",
    "--provider": "provider",
    "--model": "model",
    "--api-key": "api_key",
    "--thinking": "thinking",
    "--session": "session",
    "--tools": "tools",
    "--system-prompt": "system_prompt",
    "--append-system-prompt": "append_system_prompt",
}
_BOOL_FLAGS = {
    "-p": "print_",
    "--print": "print_",
    "-c": "continue_",
    "--continue": "continue_",
    "-r": "resume",
    "--resume": "resume",
    "--no-session": "no_session",
    "--no-tools": "no_tools",
    "-v": "version",
    "--version": "version",
    "-h": "help",
    "--help": "help",
}
MODES = ("tui", "print", "json", "rpc")
THINKING = ("off", "minimal", "low", "medium", "high", "xhigh")


def parse_args(argv: list[str]) -> CliArgs:
    args = CliArgs()
    i = 0
    only_positional = False
    while i < len(argv):
        arg = argv[i]
        i += 1
        if only_positional or not arg.startswith("-") or arg == "-":
            if arg.startswith("@") and len(arg) > 1:
                args.files.append(arg[1:])
            else:
                args.messages.append(arg)
            continue
        if arg == "--":
            only_positional = True
            continue
        name, eq, inline = arg.partition("=")
        if name in _BOOL_FLAGS:
            setattr(args, _BOOL_FLAGS[name], True)
        elif name in _VALUE_FLAGS:
            if eq:
                value = inline
            elif i < len(argv):
                value = argv[i]
                i += 1
            else:
                raise UsageError(f"{name} needs a value")
            setattr(args, _VALUE_FLAGS[name], value)
        elif name == "--list-models":
            if eq:
                args.list_models = inline
            elif i < len(argv) and not argv[i].startswith("-"):
                args.list_models = argv[i]
                i += 1
            else:
                args.list_models = True
        elif name == "--export":
            values: list[str] = []
            while i < len(argv) and len(values) < 2 and not argv[i].startswith("-"):
                values.append(argv[i])
                i += 1
            if not values:
                raise UsageError("--export needs a session file (and optionally an output .html path)")
            args.export = values
        elif name.startswith("--") and len(name) > 2:
            args.extension_flags[name[2:]] = inline if eq else True
        else:
            raise UsageError(f"unknown option {arg} (see wolli --help)")
    if args.mode is not None and args.mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {args.mode!r}")
    if args.thinking is not None and args.thinking not in THINKING:
        raise UsageError(f"--thinking must be one of {', '.join(THINKING)}, not {args.thinking!r}")
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(f"wolli: {exc}", file=sys.stderr)
        return 2
    if args.version:
        from .__about__ import __version__

        print(f"wolli {__version__}")
        return 0
    if args.help:
        print(HELP, end="")
        return 0
    if args.list_models is not None:
        from .modes.commands import list_models

        return list_models(args)
    if args.export is not None:
        from .modes.commands import export_session

        return export_session(args)
    mode = args.mode or ("print" if args.print_ else "tui")
    if args.resume and not args.session and mode == "tui":
        mode = "print"  # no session picker without the TUI: list the sessions instead
    if mode in ("print", "json"):
        from .modes.print_mode import run_headless

        return run_headless(args, mode)
    if mode == "rpc":
        print("wolli: --mode rpc is not available in this version yet; use -p or --mode json.", file=sys.stderr)
        return 2
    print(
        "wolli: the full-screen TUI is not available in this version yet.\n"
        'Run headless instead: wolli -p "your request"   (or --mode json for an event stream)',
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
