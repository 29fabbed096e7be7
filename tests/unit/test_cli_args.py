"""Argument parsing (pure function; the subprocess tests cover the modes)."""

from __future__ import annotations

import pytest

from wolli.cli.main import UsageError, parse_args


def test_flags_files_messages_and_extension_flags():
    args = parse_args(["-p", "--model", "anthropic/claude:high", "@a.py", "fix it", "--plan", "--depth=3", "and test"])
    assert args.print_ and args.model == "anthropic/claude:high"
    assert args.files == ["a.py"]
    assert args.messages == ["fix it", "and test"]
    assert args.unknown_options == {"plan": True, "depth": "3"}


def test_list_models_optional_search_and_export_values():
    assert parse_args(["--list-models"]).list_models is True
    assert parse_args(["--list-models", "sonnet"]).list_models == "sonnet"
    assert parse_args(["--export", "s.jsonl", "o.html"]).export == ["s.jsonl", "o.html"]
    with pytest.raises(UsageError):
        parse_args(["--export"])


def test_value_flag_without_value_and_bad_mode():
    with pytest.raises(UsageError, match="--model needs a value"):
        parse_args(["--model"])
    with pytest.raises(UsageError, match="--mode"):
        parse_args(["--mode", "gui"])


def test_double_dash_makes_the_rest_positional():
    args = parse_args(["-p", "--", "--not-a-flag", "@literal"])
    assert args.messages == ["--not-a-flag"]
    assert args.files == ["literal"]
