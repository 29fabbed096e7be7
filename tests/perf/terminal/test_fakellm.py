"""Self-tests for fakellm.py and the floor agent (stdlib unittest; pytest also collects them).

    python3 -m unittest tests/perf/terminal/test_fakellm.py      or      python3 -m pytest tests/perf/terminal/test_fakellm.py
"""
from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


class FakeLLMTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp(prefix="fakellm-test-"))
        cls.script = cls.tmp / "script.json"
        cls.log = cls.tmp / "requests.jsonl"
        cls.script.write_text(json.dumps({"turns": [
            {"type": "tool_call", "name": "read", "args": {"path": "/etc/hostname"}},
            {"type": "text", "tokens": 12, "end_marker": "ZZEND"}]}))
        port_file = cls.tmp / "port"
        cls.proc = subprocess.Popen([sys.executable, str(HERE / "fakellm.py"), "--script", str(cls.script),
                                     "--port-file", str(port_file), "--log", str(cls.log), "--reload", "--quiet"])
        for _ in range(200):
            if port_file.exists():
                break
            time.sleep(0.02)
        cls.port = int(port_file.read_text())

    @classmethod
    def tearDownClass(cls) -> None:
        cls.proc.terminate()
        cls.proc.wait(5)

    def post(self, path: str, body: dict, headers: dict | None = None) -> tuple[int, str]:
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
        r = c.getresponse()
        data = r.read().decode()
        c.close()
        return r.status, data

    @staticmethod
    def sse(data: str) -> list[dict]:
        out = []
        for line in data.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
        return out

    def last_logged(self) -> dict:
        return json.loads(self.log.read_text().splitlines()[-1])

    def test_openai_stream_tool_call_then_text(self) -> None:
        tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
        st, data = self.post("/v1/chat/completions", {"model": "m", "stream": True, "tools": tools,
                                                       "messages": [{"role": "user", "content": "hi"}]})
        self.assertEqual(st, 200)
        self.assertTrue(data.rstrip().endswith("data: [DONE]"))
        chunks = self.sse(data)
        args = "".join(tc["function"].get("arguments", "") for c in chunks for ch in c["choices"]
                       for tc in ch["delta"].get("tool_calls", []))
        self.assertEqual(json.loads(args), {"path": "/etc/hostname"})
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "tool_calls")
        # after a tool result: turn 1, text
        msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": []},
                {"role": "tool", "tool_call_id": "x", "content": "host"}]
        st, data = self.post("/v1/chat/completions", {"model": "m", "stream": True, "tools": tools,
                                                       "stream_options": {"include_usage": True}, "messages": msgs})
        chunks = self.sse(data)
        text = "".join(ch["delta"].get("content") or "" for c in chunks for ch in c["choices"])
        self.assertEqual(len(text.split()), 12)
        self.assertTrue(text.endswith("ZZEND"))
        self.assertEqual(chunks[-1]["choices"], [])  # usage chunk
        self.assertEqual(chunks[-1]["usage"]["completion_tokens"], 12)
        logged = self.last_logged()
        self.assertEqual((logged["api"], logged["turn"], logged["reply"]), ("openai", 1, "text"))
        self.assertEqual(logged["body"]["messages"][-1]["content"], "host")

    def test_openai_non_stream_and_side_request(self) -> None:
        st, data = self.post("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "t"}]})
        obj = json.loads(data)
        self.assertEqual(obj["object"], "chat.completion")
        # no tools while the turn is a tool call -> side reply text
        self.assertEqual(obj["choices"][0]["finish_reason"], "stop")
        self.assertEqual(self.last_logged()["reply"], "side")

    def test_anthropic_stream(self) -> None:
        tools = [{"name": "read", "input_schema": {"type": "object"}}]
        st, data = self.post("/v1/messages", {"model": "m", "stream": True, "max_tokens": 10, "tools": tools,
                                              "messages": [{"role": "user", "content": "hi"}]},
                             {"anthropic-version": "2023-06-01"})
        events = [line[7:] for line in data.splitlines() if line.startswith("event: ")]
        self.assertEqual(events[0], "message_start")
        self.assertEqual(events[-3:], ["content_block_stop", "message_delta", "message_stop"])
        evs = self.sse(data)
        partial = "".join(e["delta"]["partial_json"] for e in evs if e["type"] == "content_block_delta")
        self.assertEqual(json.loads(partial), {"path": "/etc/hostname"})
        self.assertEqual(evs[-2]["delta"]["stop_reason"], "tool_use")
        msgs = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]
        st, data = self.post("/v1/messages", {"model": "m", "stream": True, "max_tokens": 10, "tools": tools,
                                              "messages": msgs})
        evs = self.sse(data)
        text = "".join(e["delta"]["text"] for e in evs if e["type"] == "content_block_delta")
        self.assertTrue(text.endswith("ZZEND"))
        self.assertEqual(evs[-2]["delta"]["stop_reason"], "end_turn")

    def test_models(self) -> None:
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("GET", "/v1/models")
        obj = json.loads(c.getresponse().read())
        self.assertEqual(obj["data"][0]["id"], "fake-model")
        c.request("GET", "/v1/models", headers={"anthropic-version": "2023-06-01"})
        obj = json.loads(c.getresponse().read())
        self.assertEqual(obj["data"][0]["type"], "model")
        c.close()

    def test_floor_agent_tool_loop(self) -> None:
        env = dict(os.environ, BENCH_BASE_URL=f"http://127.0.0.1:{self.port}/v1", BENCH_API_KEY="k")
        r = subprocess.run([sys.executable, str(HERE / "floor_agent.py"), "-p", "read it"], env=env,
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ZZEND", r.stdout)
        reqs = [json.loads(line) for line in self.log.read_text().splitlines()]
        self.assertEqual(reqs[-1]["turn"], 1)
        self.assertEqual(reqs[-1]["body"]["messages"][-1]["role"], "tool")


if __name__ == "__main__":
    unittest.main()
