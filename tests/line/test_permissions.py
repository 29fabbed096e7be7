"""The safety net in the line mode: the permission prompt, the mode, and /rewind."""

from __future__ import annotations

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_tool_call

CHOICE = "Number, or words to narrow the list:"


async def test_the_call_is_printed_then_a_numbered_choice_allows_it_once(line, faux, project):
    term = await line(permission_mode="default")
    faux.push([faux_tool_call("bash", {"command": "touch made\x1b[31m.txt"})], "Made it.")
    await term.send("make a file")
    await term.wait_for("Allow it?")
    assert "Allow bash: touch made␛[31m.txt?" in term.text  # the escape is shown, never sent to the terminal
    assert "1. Allow once" in term.text and "2. Allow always: Bash(touch:*)" in term.text
    await term.wait_asked(CHOICE)
    term.type("1\r")
    await term.wait_for("Made it.")
    assert (project / "made\x1b[31m.txt").exists()


async def test_allow_always_asks_for_the_rule_and_saves_it(line, faux, project):
    term = await line(permission_mode="default")
    faux.push([faux_tool_call("bash", {"command": "git status --short"})], "Clean.",
              [faux_tool_call("bash", {"command": "git status"})], "Still clean.")
    await term.send("status")
    await term.wait_asked(CHOICE)
    term.type("2\r")
    await term.wait_asked("Rule to save (edit it, Enter saves):")
    term.type("\x15Bash(git status:*)\r")  # Ctrl+U clears the suggestion first
    await term.wait_for("Clean.")
    await term.send("again")
    await term.wait_for("Still clean.")
    assert term.text.count("Allow it?") == 1
    rules = term.repl.session.permissions.rules
    assert [str(r.rule) for r in rules.allow] == ["Bash(git status:*)"]


async def test_plan_and_the_mode_in_the_status_line(line, faux, project):
    term = await line(permission_mode="default")
    await term.send("/plan")
    await term.wait_for("Permission mode: plan")
    faux.push([faux_tool_call("write", {"path": "x.py", "content": "x"})], "My plan.")
    await term.send("plan it")
    await term.wait_for("My plan.")
    await term.wait_for("plan mode")
    assert not (project / "x.py").exists() and "Allow it?" not in term.text
    await term.send("/plan")
    await term.wait_for("Permission mode: default")
    await term.send("/permissions accept-edits")
    await term.wait_for("Permission mode: accept-edits")
    await term.wait_idle_prompt()
    # Said once each: the command and the mode-change event used to print it both.
    assert term.text.count("Permission mode: plan") == 1
    assert term.text.count("Permission mode: accept-edits") == 1


async def test_rewind_restores_the_file_and_puts_the_message_back(line, faux, project):
    (project / "a.txt").write_text("one\n")
    term = await line()
    faux.push([faux_tool_call("edit", {"path": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}]})], "Done.")
    await term.send("change a.txt")
    await term.wait_for("Done.")
    await term.send("/rewind")
    await term.wait_for("Rewind to before which message?")
    await term.wait_asked(CHOICE)
    term.type("1\r")
    await term.wait_for("Restore what?")
    await term.wait_asked(CHOICE)
    term.type("1\r")
    await term.wait_for("Rewind: conversation rewound, 1 file restored.")
    assert (project / "a.txt").read_text() == "one\n"
    await wait_until(lambda: term.repl.prompter.editor_text() == "change a.txt", 5, "the message in the prompt")


async def test_alt_m_and_the_permissions_command(line, faux, project):
    term = await line(permission_mode="default")
    await term.wait_idle_prompt()
    term.type("\x1bm")  # Alt+M
    await term.wait_for("Permission mode: accept-edits")
    await term.send("/permissions deny Read(~/.ssh/**) user")
    await term.wait_for("Saved deny rule Read(~/.ssh/**) for every project")
    await term.send("/permissions allow Bash(")
    await term.wait_for("not closed")
    await term.send("/permissions")
    await term.wait_for("Deny rules (1)")
    assert "Read(~/.ssh/**)    [user]" in term.text and "Mode      accept-edits" in term.text
    await term.wait_asked(CHOICE)
    term.type("\r")  # nothing chosen: the menu closes
    await term.send("/permissions remove deny Read(~/.ssh/**)")
    await term.wait_for("Removed deny rule Read(~/.ssh/**) (user).")
