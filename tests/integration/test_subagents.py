"""Subagents end to end on the runtime: the ``task`` tool, children as linked sessions.

Only the model is scripted (a loopback server speaking the OpenAI wire format); the host,
the sessions, their files, the tools and the permission gate are the real ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.loopback import json_reply
from tests.support.openai_chat import text_answer, tool_call_answer, tool_calls_answer, write_models_json
from tests.support.processes import alive
from tests.support.subagents import Router, system_prompt, tool_messages, tool_names, write_definition
from wolli.config import paths
from wolli.runtime.host.agent_host import AgentHost
from wolli.runtime.live.options import SessionOptions


def task(name: str, prompt: str, call_id: str) -> tuple[str, dict[str, str], str]:
    return ("task", {"subagent_type": name, "description": f"{name} job", "prompt": prompt}, call_id)


@pytest.fixture
def router(loopback, wolli_home):
    write_models_json(wolli_home, loopback.url + "/v1")
    found = Router({"alpha": "ALPHA-MARKER", "beta": "BETA-MARKER"})
    found.install(loopback)
    return found


async def start(project: Path, **options):
    host = AgentHost()
    model = host.model_registry.find("local", "local-model")
    session = await host.start(SessionOptions(cwd=str(project), model=model, **options))
    events: list = []
    session.observe(events.append)
    return host, session, events


def children_dir(host: AgentHost, session) -> Path:
    return Path(session.session_file).parent / "subagents"


async def test_two_children_run_at_once_each_with_its_own_prompt_and_tools(router, project):
    home = paths.agent_home()
    write_definition(home / "subagents", "alpha", "You are ALPHA-MARKER, a reader.", tools="Read")
    write_definition(home / "subagents", "beta", "You are BETA-MARKER, a searcher.", tools="Grep, LS")
    router.rendezvous = {"alpha", "beta"}
    router.script("parent", tool_calls_answer([task("alpha", "read the readme", "call_a"),
                                               task("beta", "find the tests", "call_b")]),
                  text_answer("both reported"))
    router.script("alpha", text_answer("alpha found the readme"))
    router.script("beta", text_answer("beta found three tests"))
    host, session, events = await start(project)
    await session.prompt("delegate both")
    await host.shutdown()

    assert router.met, "the children's requests did not overlap: they ran one after the other"
    alpha, beta = router.requests["alpha"][0], router.requests["beta"][0]
    assert tool_names(alpha) == ["read"] and tool_names(beta) == ["grep", "ls"]
    assert "ALPHA-MARKER" in system_prompt(alpha) and "BETA-MARKER" not in system_prompt(alpha)
    assert "BETA-MARKER" in system_prompt(beta) and "ALPHA-MARKER" not in system_prompt(beta)
    assert "You are Wolli, an expert" not in system_prompt(alpha) + system_prompt(beta)
    assert [m for m in alpha.json["messages"] if m["role"] == "user"][0]["content"] == "read the readme"
    parent_first, parent_second = router.requests["parent"]
    assert "task" in tool_names(parent_first)
    description = next(t for t in parent_first.json["tools"] if t["function"]["name"] == "task")["function"]
    assert "- alpha: the alpha subagent" in description["description"]
    results = tool_messages(parent_second)
    assert any("alpha found the readme" in r for r in results) and any("beta found three tests" in r for r in results)

    kinds = [e.type for e in events]
    assert kinds.count("subagent_start") == 2 and kinds.count("subagent_end") == 2
    assert {e.name for e in events if e.type == "subagent_event"} == {"alpha", "beta"}
    # Linked sessions: the parent's results name the children, the children's headers the parent.
    results = [e.message for e in session.session_manager.get_entries()
               if getattr(getattr(e, "message", None), "role", None) == "toolResult"]
    for result in results:
        child_file = Path(result.details["sessionFile"])
        assert child_file.parent == children_dir(host, session)
        header = json.loads(child_file.read_text().splitlines()[0])
        assert header["parentSession"] == session.session_file
        assert header["subagent"]["name"] == result.details["subagent"]
        assert header["subagent"]["toolCallId"] == result.tool_call_id
        assert header["id"] == result.details["sessionId"]


async def test_a_definition_denies_a_tool_the_child_then_asks_for(router, project):
    home = paths.agent_home()
    write_definition(home / "subagents", "alpha", "You are ALPHA-MARKER.", disallowedTools="Bash, Write, Edit")
    router.script("parent", tool_call_answer("task", task("alpha", "run ls", "c1")[1], "c1"), text_answer("ok"))
    router.script("alpha", tool_call_answer("bash", {"command": "echo hi > made.txt"}, "b1"), text_answer("could not"))
    host, session, _ = await start(project, permission_mode="yolo")
    await session.prompt("go")
    await host.shutdown()
    first = router.requests["alpha"][0]
    assert "bash" not in tool_names(first) and "write" not in tool_names(first) and "read" in tool_names(first)
    assert "Tool bash not found" in tool_messages(router.requests["alpha"][1])[0]
    assert not (project / "made.txt").exists()


async def test_a_child_that_may_not_ask_is_refused_and_says_so(router, project):
    write_definition(paths.agent_home() / "subagents", "alpha", "You are ALPHA-MARKER.")
    router.script("parent", tool_call_answer("task", task("alpha", "make a file", "c1")[1], "c1"), text_answer("ok"))
    router.script("alpha", tool_call_answer("write", {"path": "x.txt", "content": "x"}, "w1"), text_answer("blocked"))
    host, session, _ = await start(project, permission_mode="default")
    await session.prompt("go")
    await host.shutdown()
    refusal = tool_messages(router.requests["alpha"][1])[0]
    assert "the subagent 'alpha' may not ask the user" in refusal
    assert not (project / "x.txt").exists()


async def test_plan_mode_binds_children_even_when_their_file_says_bypass(router, project):
    write_definition(paths.agent_home() / "subagents", "alpha", "You are ALPHA-MARKER.",
                     permissionMode="bypassPermissions")
    router.script("parent", tool_call_answer("task", task("alpha", "make a file", "c1")[1], "c1"), text_answer("ok"))
    router.script("alpha", tool_call_answer("write", {"path": "x.txt", "content": "x"}, "w1"), text_answer("planned"))
    host, session, _ = await start(project, permission_mode="plan")
    await session.prompt("go")
    await host.shutdown()
    assert "Plan mode" in system_prompt(router.requests["alpha"][0])
    assert not (project / "x.txt").exists()


async def test_a_failing_child_is_the_tools_error_and_the_parent_goes_on(router, project):
    write_definition(paths.agent_home() / "subagents", "alpha", "You are ALPHA-MARKER.")
    router.script("parent", tool_call_answer("task", task("alpha", "do it", "c1")[1], "c1"), text_answer("it failed"))
    router.script("alpha", json_reply(400, {"error": {"message": "model exploded"}}))
    host, session, events = await start(project)
    await session.prompt("go")
    await host.shutdown()
    result = next(e.message for e in session.session_manager.get_entries()
                  if getattr(getattr(e, "message", None), "role", None) == "toolResult")
    assert result.is_error and "model exploded" in result.content[0].text
    assert result.details["status"] == "error" and result.details["sessionId"]
    end = next(e for e in events if e.type == "subagent_end")
    assert end.status == "error" and "model exploded" in end.error
    assert session.messages[-1].text() == "it failed"


async def test_an_unknown_subagent_is_an_error_listing_the_real_ones(router, project):
    router.script("parent", tool_call_answer("task", task("nobody", "x", "c1")[1], "c1"), text_answer("ok"))
    host, session, _ = await start(project)
    await session.prompt("go")
    await host.shutdown()
    text = tool_messages(router.requests["parent"][1])[0]
    assert "no subagent named 'nobody'" in text and "general-purpose" in text


async def test_abort_stops_both_running_children_and_their_processes(router, project):
    import asyncio

    from tests.support.waiting import wait_until

    for name, marker in (("alpha", "ALPHA-MARKER"), ("beta", "BETA-MARKER")):
        write_definition(paths.agent_home() / "subagents", name, f"You are {marker}.", tools="Bash")
    router.script("parent", tool_calls_answer([task("alpha", "wait", "c1"), task("beta", "wait", "c2")]))
    for name in ("alpha", "beta"):
        router.script(name, tool_call_answer("bash", {"command": f"echo $$ > {name}.pid; exec sleep 47.123"}, "b1"))
    host, session, events = await start(project, permission_mode="yolo")
    run = asyncio.create_task(session.prompt("go"))
    pid_files = [project / "alpha.pid", project / "beta.pid"]
    await wait_until(lambda: all(p.exists() and p.read_text().strip().isdigit() for p in pid_files), 15, "both sleeps")
    pids = [int(p.read_text()) for p in pid_files]
    assert all(alive(pid) for pid in pids)
    session.abort()
    await asyncio.wait_for(run, 15)
    await wait_until(lambda: not any(alive(pid) for pid in pids), 10, "the children's processes to end")
    ends = [e for e in events if e.type == "subagent_end"]
    assert sorted(e.status for e in ends) == ["aborted", "aborted"]
    assert not host.subagent_runs
    await host.shutdown()


CLAUDE_CODE_REVIEWER = """---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and
  maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash, WebFetch
model: sonnet
color: blue
---

You are a senior code reviewer (CC-REVIEWER-MARKER) ensuring high standards of code quality.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
"""


async def test_a_claude_code_agent_file_works_unchanged_once_the_project_is_approved(router, project):
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "code-reviewer.md").write_text(CLAUDE_CODE_REVIEWER)
    router.markers["reviewer"] = "CC-REVIEWER-MARKER"
    router.script("parent", tool_call_answer("task", task("nobody", "x", "c0")[1], "c0"), text_answer("ok"))
    host, session, _ = await start(project)
    await session.prompt("before approval")
    assert "code-reviewer" not in json.dumps(router.requests["parent"][0].json["tools"])
    assert host.subagents.load(str(project)).project_verdict == "unknown"
    assert host.subagents.approve_project(str(project)) == ["code-reviewer"]
    session.refresh_tools()
    router.script("parent", tool_call_answer("task", task("code-reviewer", "review the diff", "c1")[1], "c1"),
                  text_answer("reviewed"))
    router.script("reviewer", text_answer("looks good"))
    await session.prompt("review")
    await host.shutdown()
    request = router.requests["reviewer"][0]
    assert system_prompt(request).startswith("You are a senior code reviewer (CC-REVIEWER-MARKER)")
    assert tool_names(request) == ["read", "bash", "grep", "find"]
    assert "looks good" in tool_messages(router.requests["parent"][-1])[-1]
    description = next(t for t in router.requests["parent"][-2].json["tools"] if t["function"]["name"] == "task")
    assert "- code-reviewer: Expert code review specialist. Proactively reviews" in description["function"]["description"]


WATCHER = '''
seen = []


def extension(wolli):
    wolli.register_subagent({"name": "gamma", "description": "counts things",
                             "prompt": "You are GAMMA-MARKER.", "tools": ["Read", "Bash"]})

    def start(event, ctx):
        seen.append(("start", event.name, ctx.subagent))

    def end(event, ctx):
        seen.append(("end", event.name, event.status, event.result))

    def tool_call(event, ctx):
        seen.append(("tool_call", event.tool_name, ctx.subagent.name if ctx.subagent else None))
        if ctx.subagent is not None and event.tool_name == "bash":
            return {"block": True, "reason": "no shell for children"}

    wolli.on("subagent_start", start)
    wolli.on("subagent_end", end)
    wolli.on("tool_call", tool_call)
'''


async def test_extensions_register_subagents_and_see_their_events_and_tool_calls(router, project, tmp_path):
    import sys

    source = tmp_path / "watcher.py"
    source.write_text(WATCHER)
    router.markers["gamma"] = "GAMMA-MARKER"
    router.script("parent", tool_call_answer("task", task("gamma", "count", "c1")[1], "c1"), text_answer("ok"))
    router.script("gamma", tool_call_answer("bash", {"command": "echo hi"}, "b1"), text_answer("counted 3"))
    host = AgentHost()
    host.extensions.configure(packages=False, cli_paths=[str(source)])
    await host.extensions.load(str(project))
    model = host.model_registry.find("local", "local-model")
    session = await host.start(SessionOptions(cwd=str(project), model=model, permission_mode="yolo"))
    await session.prompt("go")
    record = next(r for r in host.extensions.registry.records if r.source.path == source)
    seen = sys.modules[record.module_name].seen
    assert tool_names(router.requests["gamma"][0]) == ["read", "bash"]
    assert "no shell for children" in tool_messages(router.requests["gamma"][1])[0]
    assert ("tool_call", "task", None) in seen and ("tool_call", "bash", "gamma") in seen
    start = next(s for s in seen if s[0] == "start")
    assert start[1] == "gamma" and start[2] is None  # the parent's handler: no ctx.subagent
    assert ("end", "gamma", "done", "counted 3") in seen
    handle = host.handle(session)
    links = handle.session_manager.get_subagent_sessions()
    assert [(link.name, link.status) for link in links] == [("gamma", "done")]
    assert handle.session_manager.get_subagent_sessions(links[0].entry_id) == links
    assert record.info()["subagents"] == ["gamma"]
    await host.shutdown()


async def test_a_child_allowed_to_ask_asks_through_the_parents_ui_under_its_name(router, project):
    from wolli.testing import ScriptedUI

    write_definition(paths.agent_home() / "subagents", "alpha", "You are ALPHA-MARKER.", askUser="true")
    router.script("parent", tool_call_answer("task", task("alpha", "make a file", "c1")[1], "c1"), text_answer("ok"))
    router.script("alpha", tool_call_answer("write", {"path": "x.txt", "content": "x"}, "w1"), text_answer("made it"))
    ui = ScriptedUI().answer("permission", "allow_once")
    host = AgentHost(ui=ui, mode="tui")
    model = host.model_registry.find("local", "local-model")
    session = await host.start(SessionOptions(cwd=str(project), model=model, permission_mode="default"))
    await session.prompt("go")
    await host.shutdown()
    assert [r.reason.split(":")[0] for r in ui.permission_requests] == ["subagent alpha"]
    assert (project / "x.txt").read_text() == "x"
    result = next(e.message for e in session.session_manager.get_entries()
                  if getattr(getattr(e, "message", None), "role", None) == "toolResult")
    assert result.details["changedFiles"] == ["x.txt"] and "Files changed: x.txt" in result.content[0].text


async def test_parallel_children_are_bounded_by_the_setting(router, project, wolli_home):
    (wolli_home / "settings.json").write_text(json.dumps({"subagents": {"maxParallel": 1}}))
    for name, marker in (("alpha", "ALPHA-MARKER"), ("beta", "BETA-MARKER")):
        write_definition(paths.agent_home() / "subagents", name, f"You are {marker}.")
    seen_running: list[int] = []
    host_ref: list[AgentHost] = []

    def answer(name: str):
        def reply(request):
            seen_running.append(len(host_ref[0].subagent_runs))
            return text_answer(f"{name} done")
        return reply

    router.script("parent", tool_calls_answer([task("alpha", "a", "c1"), task("beta", "b", "c2")]), text_answer("ok"))
    router.script("alpha", answer("alpha"))
    router.script("beta", answer("beta"))
    host, session, _ = await start(project)
    host_ref.append(host)
    await session.prompt("go")
    await host.shutdown()
    assert seen_running == [1, 1]
    assert all("done" in r for r in tool_messages(router.requests["parent"][1]))


async def test_a_childs_session_start_cannot_take_over_the_parents_screen(router, project, tmp_path):
    from wolli.testing import ScriptedUI

    source = tmp_path / "status.py"
    source.write_text("def extension(wolli):\n"
                      "    def start(event, ctx):\n"
                      "        ctx.ui.set_status('who', ctx.subagent.name if ctx.subagent else 'parent')\n"
                      "        ctx.ui.notify('started')\n"
                      "    wolli.on('session_start', start)\n")
    write_definition(paths.agent_home() / "subagents", "alpha", "You are ALPHA-MARKER.")
    router.script("parent", tool_call_answer("task", task("alpha", "x", "c1")[1], "c1"), text_answer("ok"))
    router.script("alpha", text_answer("fine"))
    ui = ScriptedUI()
    host = AgentHost(ui=ui, mode="tui")
    host.extensions.configure(packages=False, cli_paths=[str(source)])
    await host.extensions.load(str(project))
    model = host.model_registry.find("local", "local-model")
    session = await host.start(SessionOptions(cwd=str(project), model=model))
    await session.prompt("go")
    await host.shutdown()
    assert ui.statuses == {"who": "parent"}
    assert ("[alpha] started", "info") in ui.notifications and ("started", "info") in ui.notifications
    assert not host._handles or all(h._session is session for h in host._handles.values())


async def test_rewinding_the_parent_undoes_what_its_children_changed(router, project):
    (project / "a.txt").write_text("old a\n")
    for name, marker in (("alpha", "ALPHA-MARKER"), ("beta", "BETA-MARKER")):
        write_definition(paths.agent_home() / "subagents", name, f"You are {marker}.")
    router.script("parent", tool_calls_answer([task("alpha", "edit a", "c1"), task("beta", "write b", "c2")]),
                  text_answer("both changed files"))
    router.script("alpha", tool_call_answer("write", {"path": "a.txt", "content": "new a\n"}, "call_1"),
                  text_answer("a changed"))
    router.script("beta", tool_call_answer("write", {"path": "b.txt", "content": "new b\n"}, "call_1"),
                  text_answer("b made"))
    host, session, _ = await start(project, permission_mode="yolo")
    await session.prompt("change files")
    assert (project / "a.txt").read_text() == "new a\n" and (project / "b.txt").exists()
    result = await session.rewind(scope="code", on_conflict="overwrite")
    await host.shutdown()
    assert (project / "a.txt").read_text() == "old a\n"
    assert not (project / "b.txt").exists()
    assert sorted(Path(p).name for p in result.restored + result.removed) == ["a.txt", "b.txt"]


async def test_max_turns_stops_a_child_and_its_last_words_are_the_answer(router, project):
    write_definition(paths.agent_home() / "subagents", "alpha", "You are ALPHA-MARKER.", maxTurns="1", tools="LS")
    router.script("parent", tool_call_answer("task", task("alpha", "look", "c1")[1], "c1"), text_answer("ok"))
    router.script("alpha", tool_call_answer("ls", {}, "l1", text="Looking at the folder first."),
                  text_answer("never asked for"))
    host, session, events = await start(project)
    await session.prompt("go")
    await host.shutdown()
    assert len(router.requests["alpha"]) == 1
    result = tool_messages(router.requests["parent"][1])[0]
    assert result.startswith("Looking at the folder first.") and "(stopped after 1 turns" in result
    assert next(e for e in events if e.type == "subagent_end").status == "done"
