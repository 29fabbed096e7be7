"""Start-up that does not wait for servers it already knows (the tool-list cache), calls to a
server that is not ready yet, a changed list, and servers stopped at exit.

The first run with a server waits for it (its tools are part of the first request) and
caches its list; later runs send the first request at once with the cached definitions
while the server connects, and a call waits for it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.mcp.conftest import python_server
from tests.mcp.helpers import MODEL, agent_config, tool_texts, tools_of
from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.waiting import wait_until_sync
from wolli.mcp.cache import MAX_ENTRIES, OfferCache
from wolli.mcp.types import ServerOffer, ToolInfo

CACHE = "mcp-cache.json"


def _names(request) -> list[str]:
    return [t["name"] for t in tools_of(request)]


def _cache(home: Path) -> dict:
    return json.loads((home / "agents" / "default" / CACHE).read_text())


def test_a_known_server_is_not_waited_for_and_a_changed_list_is_taken_up(project, wolli_home, loopback,
                                                                        local_model):
    agent_config(wolli_home, {"time": python_server("mcp-server-time")})
    # Cold: nothing known, so the first request waits for the server and its list is cached.
    loopback.push(text_answer("first"))
    result = wolli(["-p", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(_names(loopback.requests[0]))
    path = wolli_home / "agents" / "default" / CACHE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    (entry,) = _cache(wolli_home)["servers"].values()
    assert entry["server"] == "time"
    assert {t["name"] for t in entry["offer"]["tools"]} == {"get_current_time", "convert_time"}

    # The cache says what an older version of the server offered: a tool it no longer has.
    data = _cache(wolli_home)
    offer = next(iter(data["servers"].values()))["offer"]
    old = dict(next(t for t in offer["tools"] if t["name"] == "get_current_time"), name="old_tool")
    offer["tools"] = [t for t in offer["tools"] if t["name"] != "convert_time"] + [old]
    path.write_text(json.dumps(data))

    loopback.push(tool_call_answer("mcp__time__old_tool", {"timezone": "UTC"}), text_answer("second"))
    result = wolli(["-p", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    first, then = loopback.requests[1], loopback.requests[2]
    assert "mcp__time__old_tool" in _names(first) and "mcp__time__convert_time" not in _names(first)
    assert "no longer offers the tool 'old_tool'" in tool_texts(then)[0]
    assert "mcp__time__convert_time" in _names(then) and "mcp__time__old_tool" not in _names(then)
    assert {t["name"] for t in next(iter(_cache(wolli_home)["servers"].values()))["offer"]["tools"]} == \
        {"get_current_time", "convert_time"}

    # Warm: the model calls the server at once, before it can be ready; the call waits for it.
    loopback.push(tool_call_answer("mcp__time__get_current_time", {"timezone": "Europe/Berlin"}),
                  text_answer("third"))
    result = wolli(["-p", *MODEL, "what time?"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "third\n"
    answer = tool_texts(loopback.requests[4])[0]
    assert '"timezone": "Europe/Berlin"' in answer and "datetime" in answer


def test_a_changed_configuration_is_not_served_from_the_cache(project, wolli_home, loopback, local_model):
    agent_config(wolli_home, {"time": python_server("mcp-server-time")})
    loopback.push(text_answer("one"), text_answer("two"))
    assert wolli(["-p", *MODEL, "hi"], project).returncode == 0
    agent_config(wolli_home, {"time": python_server("mcp-server-git", "--repository", str(project))})
    os.system(f"git init -q {project}")
    result = wolli(["-p", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    names = _names(loopback.requests[1])
    assert "mcp__time__git_status" in names and "mcp__time__get_current_time" not in names
    assert len(_cache(wolli_home)["servers"]) == 2


def test_servers_are_stopped_at_exit(project, wolli_home, loopback, local_model):
    agent_config(wolli_home, {"time": python_server("mcp-server-time"), "time2": python_server("mcp-server-time")})
    loopback.push(text_answer("done"))
    result = wolli(["-p", *MODEL, "hi"], project)
    assert result.returncode == 0, result.stderr
    pids = []
    for name in ("time", "time2"):
        log = (wolli_home / "agents" / "default" / "logs" / f"mcp-{name}.log").read_text()
        pids += [int(line.rsplit("(pid ", 1)[1].rstrip(")")) for line in log.splitlines() if "(pid " in line]
    assert len(pids) == 2

    def gone() -> bool:
        return not any(Path(f"/proc/{pid}").exists() and "zombie" not in _status(pid) for pid in pids)

    wait_until_sync(gone, timeout=10, what="the servers ended after Wolli exited")


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


def _offer(*names: str, size: int = 10) -> ServerOffer:
    schema = {"type": "object", "properties": {"x": {"type": "string", "description": "y" * size}}}
    return ServerOffer(tools=[ToolInfo(name=n, description=f"tool {n}", input_schema=schema) for n in names])


def test_the_cache_is_bounded_and_ignores_what_it_cannot_read(tmp_path):
    path = tmp_path / CACHE
    cache = OfferCache(path)
    for index in range(MAX_ENTRIES + 3):
        assert cache.put(f"key{index}", f"s{index}", _offer("a"))
    kept = json.loads(path.read_text())["servers"]
    assert len(kept) == MAX_ENTRIES and "key0" not in kept and f"key{MAX_ENTRIES + 2}" in kept
    assert not cache.put("huge", "huge", _offer("a", size=600 * 1024))  # one list past the entry limit
    assert not cache.put(f"key{MAX_ENTRIES + 2}", "same", _offer("a"))  # unchanged: no write
    fresh = OfferCache(path).get(f"key{MAX_ENTRIES + 2}")
    assert fresh is not None and fresh.schemas_checked and [t.name for t in fresh.tools] == ["a"]

    path.write_text("{not json")
    assert OfferCache(path).get("key5") is None
    path.write_text(json.dumps({"version": 1, "servers": {"k": {"offer": {"tools": [{"name": 1}]}},
                                                           "j": {"offer": {"tools": [
                                                               {"name": "t", "description": "", "input_schema":
                                                                {"type": "string"}}]}}}}))
    assert OfferCache(path).get("k") is None and OfferCache(path).get("j") is None


def test_a_short_answer_with_every_server_known_starts_none(project, wolli_home, loopback, local_model):
    agent_config(wolli_home, {"time": python_server("mcp-server-time")})
    log = wolli_home / "agents" / "default" / "logs" / "mcp-time.log"
    loopback.push(text_answer("cold"), text_answer("warm"))
    assert wolli(["-p", *MODEL, "hi"], project).returncode == 0
    assert log.read_text().count("] started ") == 1
    result = wolli(["-p", *MODEL, "hi"], project)
    assert result.returncode == 0 and result.stdout == "warm\n", result.stderr
    assert "mcp__time__get_current_time" in _names(loopback.requests[1])  # offered from the cache
    assert log.read_text().count("] started ") == 1  # and no process, no SDK import for it
