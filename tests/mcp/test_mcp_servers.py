"""Real MCP servers from the registries, driven through the real CLI against a loopback model.

The model is scripted (tool calls in the OpenAI wire format); each test reads what the model
received next: the tools offered, the tool results.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.mcp.conftest import python_server, write_mcp
from tests.mcp.helpers import MODEL, agent_config, tool_texts, tools_of
from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.waiting import wait_until_sync


def test_time_server_tools_are_listed_and_a_call_is_answered(project, wolli_home, loopback, local_model):
    agent_config(wolli_home, {"time": python_server("mcp-server-time", "--local-timezone", "${TEST_TZ:-UTC}")})
    loopback.push(tool_call_answer("mcp__time__get_current_time", {"timezone": "Europe/Berlin"}),
                  text_answer("It is late."))
    result = wolli(["-p", *MODEL, "what time is it in Berlin?"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It is late.\n"
    offered = {t["name"]: t for t in tools_of(loopback.requests[0])}
    assert "timezone" in offered["mcp__time__get_current_time"]["parameters"]["properties"]
    assert "mcp__time__convert_time" in offered
    answer = tool_texts(loopback.requests[1])[0]
    assert '"timezone": "Europe/Berlin"' in answer and "datetime" in answer


def test_git_server_lists_its_tools_with_annotations(project, wolli_home):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    config = write_mcp(project.parent / "git.json", {"git": python_server("mcp-server-git", "--repository", str(project))})
    result = wolli(["mcp", "list", "--json", "--mcp-config", str(config)], project)
    assert result.returncode == 0, result.stderr
    server = json.loads(result.stdout)["servers"][0]
    assert server["state"] == "ready"
    tools = {t["name"]: t for t in server["tools"]}
    assert {"git_status", "git_log", "git_commit"} <= set(tools)
    assert tools["git_status"]["toolName"] == "mcp__git__git_status"


def test_filesystem_server_refuses_a_path_outside_its_root(project, wolli_home, loopback, local_model, npm_servers):
    (project / "inside.txt").write_text("inside")
    agent_config(wolli_home, {"fs": {"command": npm_servers["filesystem"], "args": [str(project)]}})
    loopback.push(tool_call_answer("mcp__fs__read_text_file", {"path": "/etc/hostname"}),
                  tool_call_answer("mcp__fs__read_text_file", {"path": str(project / "inside.txt")}, call_id="call_2"),
                  text_answer("ok"))
    result = wolli(["-p", *MODEL, "read it"], project)
    assert result.returncode == 0, result.stderr
    refused = tool_texts(loopback.requests[1])[0]
    assert "denied" in refused.lower() and "outside" in refused.lower()
    assert "inside" in tool_texts(loopback.requests[2])[1]


def test_a_missing_command_is_one_line_and_the_turn_goes_on(project, wolli_home, loopback, local_model):
    agent_config(wolli_home, {"nope": {"command": "wolli-no-such-mcp-server"},
                              "time": python_server("mcp-server-time")})
    loopback.push(tool_call_answer("mcp__nope__anything", {}), text_answer("carried on"))
    result = wolli(["-p", *MODEL, "go"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "carried on\n"
    lines = [line for line in result.stderr.splitlines() if "nope" in line]
    assert lines == ["wolli: MCP server nope: failed: command not found: wolli-no-such-mcp-server"]
    names = [t["name"] for t in tools_of(loopback.requests[0])]
    assert "mcp__time__get_current_time" in names and not any(n.startswith("mcp__nope") for n in names)
    assert tool_texts(loopback.requests[1])  # the model got an error result for the unknown tool


def _server_pids(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                pids.append(int(entry))
    return pids


def test_a_server_killed_mid_call_gives_the_model_an_error(project, wolli_home, loopback, local_model, npm_servers):
    agent_config(wolli_home, {"everything": {"command": npm_servers["everything"]}})
    loopback.push(tool_call_answer("mcp__everything__trigger-long-running-operation", {"duration": 20, "steps": 4}),
                  text_answer("noted"))
    proc = subprocess.Popen([sys.executable, "-m", "wolli", "--mode", "json", *MODEL, "run it"], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    progress: dict[str, Any] = {}
    try:
        # The call is in flight once the server reports its first step (MCP progress,
        # shown as a tool update): only then is it killed.
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            if event.get("type") == "tool_execution_update":
                progress = event
                break
        assert progress, "the server never reported progress"
        for pid in _server_pids("server-everything"):
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert progress["toolName"] == "mcp__everything__trigger-long-running-operation"
    assert "progress 1/4" in json.dumps(progress["partialResult"])
    ends = [json.loads(line) for line in out.splitlines() if '"message_end"' in line]
    assert ends[-1]["message"]["content"][0]["text"] == "noted"
    result = tool_texts(loopback.requests[1])[0]
    assert "killed" in result or "exited" in result or "closed" in result, result


def test_tool_search_offers_names_and_loads_a_definition(project, wolli_home, loopback, local_model, npm_servers):
    agent_config(wolli_home, {"everything": {"command": npm_servers["everything"]}})
    (wolli_home / "agents" / "default" / "settings.json").write_text(json.dumps({"mcp": {"toolSearch": "on"}}))
    loopback.push(tool_call_answer("tool_search", {"query": "select:mcp__everything__get-sum"}),
                  tool_call_answer("mcp__everything__get-sum", {"a": 2, "b": 40}, call_id="call_2"),
                  text_answer("42"))
    result = wolli(["-p", *MODEL, "add"], project)
    assert result.returncode == 0, result.stderr
    first = tools_of(loopback.requests[0])
    names = [t["name"] for t in first]
    assert "tool_search" in names and not any(n.startswith("mcp__everything") for n in names)
    search = next(t for t in first if t["name"] == "tool_search")
    assert "mcp__everything__echo" in search["description"]
    loaded = tool_texts(loopback.requests[1])[0]
    assert '"name": "mcp__everything__get-sum"' in loaded and '"input_schema"' in loaded
    second = tools_of(loopback.requests[1])
    assert [t["name"] for t in second[: len(names)]] == names  # what was sent stays the prefix
    assert second[-1]["name"] == "mcp__everything__get-sum"
    assert "42" in tool_texts(loopback.requests[2])[1]


def test_bearer_token_server_over_streamable_http(project, wolli_home, loopback, local_model, bearer_server):
    good = {"remote": {"type": "http", "url": bearer_server.url, "headers": {"Authorization": "Bearer ${TEST_TOKEN}"}}}
    bad = {"remote": {"type": "http", "url": bearer_server.url, "headers": {"Authorization": "Bearer wrong"}}}
    config = write_mcp(project.parent / "bad.json", bad)
    listed = wolli(["mcp", "list", "--json", "--mcp-config", str(config)], project)
    server = json.loads(listed.stdout)["servers"][0]
    assert server["state"] in ("needs-login", "failed") and server["tools"] == []
    assert "401" in server["summary"] or "login" in server["summary"]

    os.environ["TEST_TOKEN"] = bearer_server.token
    try:
        agent_config(wolli_home, good)
        loopback.push(tool_call_answer("mcp__remote__add", {"a": 2, "b": 40}), text_answer("done"))
        result = wolli(["-p", *MODEL, "add"], project)
    finally:
        del os.environ["TEST_TOKEN"]
    assert result.returncode == 0, result.stderr
    assert tool_texts(loopback.requests[1])[0].strip() == "42"


def test_resource_reference_and_prompt_command(project, wolli_home, loopback, local_model, bearer_server):
    agent_config(wolli_home, {"remote": {"type": "http", "url": bearer_server.url,
                                         "headers": {"Authorization": f"Bearer {bearer_server.token}"}}})
    loopback.push(text_answer("seen"), text_answer("reviewed"))
    result = wolli(["-p", *MODEL, "summarize @remote:memo://greeting please"], project)
    assert result.returncode == 0, result.stderr
    user = loopback.requests[0].json["messages"][-1]["content"]
    text = user if isinstance(user, str) else json.dumps(user)
    assert "Hello from the memo resource." in text
    result = wolli(["-p", *MODEL, "/mcp__remote__review parsers"], project)
    assert result.returncode == 0, result.stderr
    user = loopback.requests[1].json["messages"][-1]["content"]
    assert "Please review parsers carefully." in (user if isinstance(user, str) else json.dumps(user))


def test_project_servers_run_only_once_approved(project, wolli_home, loopback, local_model):
    write_mcp(project / ".mcp.json", {"time": python_server("mcp-server-time")})
    loopback.push(text_answer("a"), text_answer("b"))
    result = wolli(["-p", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    assert "were not started" in result.stderr and "--approve-project-mcp" in result.stderr
    assert not any(t["name"].startswith("mcp__") for t in tools_of(loopback.requests[0]))
    result = wolli(["-p", *MODEL, "--approve-project-mcp", "hi"], project)
    assert result.returncode == 0, result.stderr
    assert "mcp__time__get_current_time" in [t["name"] for t in tools_of(loopback.requests[1])]


def test_rpc_asks_for_the_project_file_and_no_child_survives_kill_9(project, wolli_home, loopback, local_model):
    from tests.support.rpc import start_client

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write_mcp(project / ".mcp.json", {"time": python_server("mcp-server-time"),
                                      "git": python_server("mcp-server-git", "--repository", str(project))})
    asked: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> Any:
        asked.append(request)
        return True

    client = start_client(project, *MODEL, on_ui_request=answer)
    def ready() -> bool:
        servers = client.request({"type": "get_mcp_servers"})["servers"]
        return len(servers) == 2 and all(s["state"] == "ready" for s in servers)

    wait_until_sync(ready, timeout=60, what="both servers ready")
    assert asked and asked[0]["method"] == "confirm" and ".mcp.json" in asked[0]["message"]
    approvals = json.loads((wolli_home / "agents" / "default" / "mcp-approvals.json").read_text())
    assert list(approvals["projects"].values())[0]["verdict"] == "approved"
    statuses = client.request({"type": "get_mcp_servers"})["servers"]
    pids = [s["pid"] for s in statuses]
    assert all(isinstance(p, int) for p in pids), [(s["name"], s["state"], s["pid"]) for s in statuses]
    os.kill(client.process.pid, signal.SIGKILL)
    client.process.wait(10)

    def gone() -> bool:
        return not any(Path(f"/proc/{p}").exists() and "Z" not in _state(p) for p in pids)

    wait_until_sync(gone, timeout=15, what="MCP server processes ended after kill -9")


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def test_a_read_only_tool_runs_in_plan_mode_and_a_writing_one_does_not(project, wolli_home, loopback, local_model):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    agent_config(wolli_home, {"git": python_server("mcp-server-git", "--repository", str(project))})
    loopback.push(tool_call_answer("mcp__git__git_status", {"repo_path": str(project)}),
                  tool_call_answer("mcp__git__git_commit", {"repo_path": str(project), "message": "x"},
                                   call_id="call_2"),
                  text_answer("planned"))
    result = wolli(["-p", *MODEL, "--permission-mode", "plan", "look"], project)
    assert result.returncode == 0, result.stderr
    status, commit = tool_texts(loopback.requests[2])
    assert "On branch" in status or "No commits yet" in status, status
    assert "plan" in commit.lower() and "nothing to commit" not in commit.lower(), commit
