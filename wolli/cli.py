"""Command-line entry point (argument parsing picks a mode)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("--version", "-v"):
        from .__about__ import __version__

        print(f"wolli {__version__}")
        return 0
    print("wolli: modes arrive in later work; try --version", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
