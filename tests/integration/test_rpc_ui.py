"""Extension UI over RPC: dialogs answered, cancelled and timed out by a real client; the
fire-and-forget calls; a dialog ended by the run's abort signal; ``ctx.mode == "rpc"``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import MODEL, UI_PROBE, start_client, write_models
from wolli.rpc_client import LATER

ANSWERS = {  # method -> (what the client answers, what the extension receives)
    "select": ("Green", "'g'"),
    "confirm": (True, "True"),
    "input": ("Ada", "'Ada'"),
    "editor": ("new\ntext", "'new\\ntext'"),
}
CANCELLED = {"select": "None", "confirm": "False", "input": "None", "editor": "None"}


@pytest.fixture
def probe(tmp_path: Path, wolli_home: Path, loopback) -> list[str]:
    write_models(wolli_home, loopback.url + "/v1")
    path = tmp_path / "probe.py"
    path.write_text(UI_PROBE)
    return [*MODEL, "-e", str(path)]


def _result(client) -> str:
    note = client.wait_for(lambda e: e.get("type") == "extension_ui_request" and e["method"] == "notify")
    return note["message"]


@pytest.mark.parametrize("method", list(ANSWERS))
def test_a_dialog_answered_by_the_client(project, probe, method):
    seen: list[dict] = []

    def answer(request):
        seen.append(request)
        return ANSWERS[method][0] if request["method"] == method else LATER

    with start_client(project, *probe, on_ui_request=answer) as client:
        client.request({"type": "prompt", "message": f"/ask {method}"})
        assert _result(client) == f"{method} -> {ANSWERS[method][1]} in rpc"
        assert client.close() == 0
    request = seen[0]
    assert request["type"] == "extension_ui_request" and request["method"] == method and request["id"]
    assert "timeout" not in request
    if method == "select":
        assert request["title"] == "Pick one" and request["options"] == ["red", "Green"]
    elif method == "confirm":
        assert request["message"] == "Really do it?"
    elif method == "input":
        assert request["placeholder"] == "your name"
    else:
        assert request["prefill"] == "line 1\nline 2"


@pytest.mark.parametrize("method", list(ANSWERS))
def test_a_dialog_cancelled_by_the_client(project, probe, method):
    with start_client(project, *probe, on_ui_request=lambda r: None if r["method"] == method else LATER) as client:
        client.request({"type": "prompt", "message": f"/ask {method}"})
        assert _result(client) == f"{method} -> {CANCELLED[method]} in rpc"


@pytest.mark.parametrize("method", list(ANSWERS))
def test_a_dialog_times_out_with_its_cancel_value(project, probe, method):
    requests: list[dict] = []
    with start_client(project, *probe, on_ui_request=lambda r: requests.append(r) or LATER) as client:
        client.request({"type": "prompt", "message": f"/ask {method} 0.3"})
        assert _result(client) == f"{method} -> {CANCELLED[method]} in rpc"
        assert requests[0]["timeout"] == 300
        late = client.request_response({"type": "extension_ui_response", "id": requests[0]["id"], "cancelled": True})
        assert late["success"] is False and "timed out" in late["error"]


def test_a_wrong_answer_is_refused_and_the_dialog_stays_open(project, probe):
    with start_client(project, *probe, on_ui_request=lambda r: LATER) as client:
        client.request({"type": "prompt", "message": "/ask select"})
        request = client.wait_for("extension_ui_request")
        wrong = client.request_response({"type": "extension_ui_response", "id": request["id"], "value": "blue"})
        assert wrong["success"] is False and "'blue' is not one of the options" in wrong["error"]
        no_bool = client.request_response({"type": "extension_ui_response", "id": request["id"], "value": 3})
        assert no_bool["success"] is False and "string 'value'" in no_bool["error"]
        client.answer_ui(request["id"], "red")
        assert _result(client) == "select -> 'red' in rpc"


def test_fire_and_forget_calls_are_sent_in_pi_shape(project, probe):
    with start_client(project, *probe) as client:
        client.request({"type": "prompt", "message": "/widgets"})
        sent = list(client.events(until=lambda e: e.get("method") == "notify"))
        client.close()
    ui = [e for e in sent if e.get("type") == "extension_ui_request"]
    assert all(e["id"] for e in ui)
    shapes = [{k: v for k, v in e.items() if k not in ("id", "type")} for e in ui]
    assert shapes[:5] == [
        {"method": "setStatus", "statusKey": "probe", "statusText": "busy"},
        {"method": "setStatus", "statusKey": "probe"},
        {"method": "setWidget", "widgetKey": "probe", "widgetLines": ["line a", "line b"],
         "widgetPlacement": "belowEditor"},
        {"method": "setWidget", "widgetKey": "probe", "widgetPlacement": "aboveEditor"},
        {"method": "setTitle", "title": "wolli - probe"},
    ]
    assert shapes[5:] == [{"method": "set_editor_text", "text": "prefilled"},
                          {"method": "notify", "message": "widgets done", "notifyType": "warning"}]


def test_the_abort_signal_ends_an_open_dialog(project, probe, loopback):
    loopback.push(tool_call_answer("guarded", {}), text_answer("after the abort"))
    with start_client(project, *probe, on_ui_request=lambda r: LATER) as client:
        client.request({"type": "prompt", "message": "run the guarded tool"})
        request = client.wait_for("extension_ui_request")
        assert request["method"] == "confirm" and request["title"] == "Run guarded?"
        client.abort()
        end = client.wait_for("tool_execution_end")
        assert "confirmed=False" in str(end["result"])
        client.wait_for("agent_settled")
        late = client.request_response({"type": "extension_ui_response", "id": request["id"], "confirmed": True})
        assert late["success"] is False
        assert client.get_state()["isStreaming"] is False


def test_stdin_closing_with_a_dialog_open_still_shuts_down(project, probe):
    with start_client(project, *probe, on_ui_request=lambda r: LATER) as client:
        client.request({"type": "prompt", "message": "/ask confirm"})
        client.wait_for("extension_ui_request")
        client.close_stdin()
        client.wait_for("session_shutdown")
        assert client.process.wait(20) == 0


def test_a_dialog_asked_from_a_sync_tool_in_a_worker_thread(project, probe, loopback):
    loopback.push(tool_call_answer("threaded", {}), text_answer("done"))
    asked: list[dict] = []
    with start_client(project, *probe, on_ui_request=lambda r: asked.append(r) or True) as client:
        client.request({"type": "prompt", "message": "use the threaded tool"})
        end = client.wait_for("tool_execution_end")
        client.wait_for("agent_settled")
    assert [r["title"] for r in asked] == ["From a thread?"]
    assert "thread confirmed=True" in str(end["result"])


def test_the_documented_extensions_work_over_rpc(project, tmp_path, wolli_home, loopback):
    from tests.tui.test_docs_extensions import doc_extensions

    write_models(wolli_home, loopback.url + "/v1")
    args = [*MODEL]
    for path in doc_extensions(tmp_path):
        args += ["-e", path]
    with start_client(project, *args, on_ui_request=lambda request: LATER) as client:
        client.request({"type": "prompt", "message": "/paint blue"})
        seen = list(client.events(lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "notify"))
        assert seen[-1]["message"] == "painting it blue"
        client.request({"type": "prompt", "message": "/ship"})  # custom() is None over RPC
        seen += client.events(lambda e: e.get("type") == "extension_ui_request" and e.get("method") == "setWidget")
        assert seen[-1]["widgetKey"] == "ship" and seen[-1]["widgetLines"] == ["ship: no"]
        seen += client.drain()
        assert [e for e in seen if e.get("type") == "extension_error"] == []
        assert client.close() == 0


def test_reload_clears_the_statuses_and_widgets_the_old_versions_set(project, tmp_path, wolli_home, loopback):
    write_models(wolli_home, loopback.url + "/v1")
    ext = tmp_path / "shows.py"
    ext.write_text(
        "def extension(wolli):\n"
        "    def show(args, ctx):\n"
        "        ctx.ui.set_status('old', 'from the old version')\n"
        "        ctx.ui.set_widget('old', ['a line'])\n"
        "    wolli.register_command('show', handler=show)\n"
        "    async def again(args, ctx):\n"
        "        await wolli.reload()\n"
        "    wolli.register_command('again', handler=again)\n")
    with start_client(project, *MODEL, "-e", str(ext), on_ui_request=lambda request: LATER) as client:
        client.request({"type": "prompt", "message": "/show"})
        client.wait_for(lambda e: e.get("method") == "setWidget")
        client.request({"type": "prompt", "message": "/again"})
        cleared = list(client.events(lambda e: e.get("method") == "setWidget" and e.get("widgetLines") is None))
        status = [e for e in cleared if e.get("method") == "setStatus"]
        assert status and status[-1]["statusKey"] == "old" and status[-1].get("statusText") is None
        assert cleared[-1]["widgetKey"] == "old"
        assert client.close() == 0
