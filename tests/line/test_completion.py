"""Completion at the line mode's prompt: the TUI's sources (built-in and extension commands,
argument completions, @ files) and an extension's own provider."""

from __future__ import annotations

from tests.support.waiting import wait_until

ARGS = '''
def extension(wolli):
    async def deploy(args, ctx):
        ctx.ui.notify("deploying " + args)
    wolli.register_command("deploy", description="ship it", handler=deploy,
                           get_argument_completions=lambda prefix: [e for e in ["staging", "production"]
                                                                   if e.startswith(prefix)])
'''

PROVIDER = '''
def extension(wolli):
    def wrap(current):
        def get_suggestions(lines, line, col, options):
            before = lines[line][:col]
            if before.endswith("#iss"):
                return {"prefix": "#iss", "items": [{"value": "#issue-42", "label": "#issue-42"}]}
            return current.get_suggestions(lines, line, col, options)
        return {"trigger_characters": ["#"], "get_suggestions": get_suggestions}

    async def on_start(event, ctx):
        ctx.ui.add_autocomplete_provider(wrap)
    wolli.on("session_start", on_start)
'''


def _buffer(term):
    return term.repl.prompter.main_session().default_buffer


async def _completions(term, typed: str) -> list[str]:
    await term.wait_idle_prompt()
    buffer = _buffer(term)
    term.type(typed)
    expected = buffer.text + typed

    def ready() -> bool:
        state = buffer.complete_state
        return (buffer.text == expected and state is not None and bool(state.completions)
                and state.original_document.text == expected)

    await wait_until(ready, what=f"completions for {typed!r}")
    return [c.text for c in buffer.complete_state.completions]


async def test_slash_commands_complete_while_typing_and_enter_takes_one(line, faux):
    term = await line(code={"deployer": ARGS})
    found = await _completions(term, "/dep")
    assert found[0] == "/deploy "
    term.type("\t")  # highlight the first
    await wait_until(lambda: _buffer(term).complete_state.current_completion is not None, what="a highlighted item")
    term.type("\r")  # Enter takes the highlighted completion instead of sending
    await wait_until(lambda: _buffer(term).text == "/deploy ", what="the completed command")
    found = await _completions(term, "pro")
    assert found == ["production "]


async def test_builtin_commands_and_their_arguments(line, faux):
    term = await line()
    found = await _completions(term, "/mod")
    assert "/model " in found
    term.type("\t\r")
    await wait_until(lambda: _buffer(term).text == "/model ", what="/model completed")
    found = await _completions(term, "faux")
    assert "faux/faux-1 " in found


async def test_at_completes_project_files(line, faux, project):
    (project / "src").mkdir()
    (project / "src" / "calculator.py").write_text("")
    term = await line()
    found = await _completions(term, "explain @calc")
    assert found == ["@src/calculator.py "]


async def test_an_extension_provider_joins_the_stack(line, faux):
    term = await line(code={"issues": PROVIDER})
    found = await _completions(term, "fix #iss")
    assert found == ["#issue-42 "]


async def test_enter_on_an_open_menu_takes_the_first_suggestion_unless_the_word_is_it(line, faux):
    term = await line(code={"deployer": ARGS})
    found = await _completions(term, "/dep")
    assert found[0] == "/deploy "
    term.type("\r")  # nothing highlighted: the first suggestion, not a prompt "/dep"
    await wait_until(lambda: _buffer(term).text == "/deploy ", what="the completed command")
    assert faux.pending == 0 and not faux.contexts


BROKEN_PROVIDER = '''
def extension(wolli):
    def wrap(current):
        raise LookupError("no provider today")

    async def on_start(event, ctx):
        ctx.ui.add_autocomplete_provider(wrap)
    wolli.on("session_start", on_start)
'''


async def test_a_provider_factory_that_raises_names_its_extension_and_the_builtin_stack_serves(line, faux,
                                                                                                wolli_home):
    term = await line(code={"issues": BROKEN_PROVIDER})
    found = await _completions(term, "/mod")
    assert "/model " in found
    await term.wait_for("issues: the autocomplete provider failed: LookupError: no provider today")
    log = (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()
    assert "wolli.extension.issues: the autocomplete provider failed" in log and "Traceback" in log
