#!/usr/bin/env python3
"""bench.py: side-by-side performance harness for terminal coding agents.

Every scenario starts tests/perf/terminal/fakellm.py on a free loopback port, runs an
agent command against it and measures the agent from the outside.  The agent
is only ever given as a shell command, so any agent can be plugged in.

Scenarios (one subcommand each):

  print   one-shot print mode ("-p hello"), the server streams --tokens tokens
          at max speed: wall time, peak RSS, CPU time.
  tool    print mode where the server first asks for a file read (tool call),
          then answers with text: wall time, peak RSS, CPU, and a check that
          the tool result reached the server.
  tui     the interactive TUI in a detached tmux session (default 120x40):
          time until the ready marker is on screen, time until that screen is
          stable, then a typed prompt: time to first and last streamed token on
          screen, CPU used for startup / for the reply / while idle, peak RSS.
  resume  the TUI started on a large saved session (made by --session-gen):
          time until the ready marker and the last saved message are on
          screen, CPU, peak RSS.
  report  turn the raw JSON lines into a markdown table.

Interface to the agent (all scenarios):
  The command (--cmd) and the optional --setup command run under bash, in
  --workdir, with this environment added to the caller's:

    HOME                      an isolated home (--home), nothing touches the real one
    BENCH_BASE_URL            http://127.0.0.1:PORT/v1  (OpenAI-compatible base URL)
    BENCH_ANTHROPIC_BASE_URL  http://127.0.0.1:PORT     (Anthropic base URL)
    BENCH_API_KEY             a dummy key
    BENCH_MODEL               the model id the server advertises (fake-model)
    BENCH_PROMPT              the prompt to send (print/tool scenarios)
    BENCH_FILE                the file the tool scenario asks to read
    BENCH_WORKDIR             the agent's working directory
    BENCH_DIR                 this folder (for profile helper scripts)
    BENCH_SESSION_PAIRS       number of user/assistant pairs (resume)
    OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY
                              set to the same values, for agents that read them

  For the TUI scenarios --ready-regex is a Python regex matched (re.M) against
  the plain text of the screen (tmux capture-pane -p); it must match only once
  the agent accepts input.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
FAKELLM = BENCH_DIR / "fakellm.py"
DEFAULT_OUT = BENCH_DIR / "results" / "raw.jsonl"
# every scratch folder lives under one root, so two runs at once can be kept apart
SCRATCH = Path(os.environ.get("BENCH_SCRATCH", "/tmp"))
RUNS_DIR = Path(os.environ.get("BENCH_RUNS_DIR", str(SCRATCH / "bench-runs")))  # server logs, agent output
API_KEY = "bench-dummy-key-0123456789"
MODEL = "fake-model"
PAGE = os.sysconf("SC_PAGE_SIZE")
# words fakellm.py streams (alpha0 beta1 ...), used to spot the first streamed token on screen
STREAM_WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
                "omicron pi rho sigma tau upsilon phi chi psi omega").split()
CLK = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------ /proc helpers
def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def proc_children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        s = _read(f"/proc/{d}/stat")
        if not s:
            continue
        try:
            ppid = int(s.rsplit(")", 1)[1].split()[1])
        except (IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def proc_tree(root: int) -> list[int]:
    kids = proc_children_map()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        if os.path.exists(f"/proc/{p}"):
            out.append(p)
        todo.extend(kids.get(p, []))
    return out


def proc_rss(pid: int) -> int:
    s = _read(f"/proc/{pid}/statm")
    return int(s.split()[1]) * PAGE if s else 0


def proc_hwm(pid: int) -> int:
    s = _read(f"/proc/{pid}/status")
    if not s:
        return 0
    m = re.search(r"^VmHWM:\s+(\d+) kB", s, re.M)
    return int(m.group(1)) * 1024 if m else 0


def proc_cpu(pid: int) -> float:
    """utime+stime of pid plus its reaped children, in seconds."""
    s = _read(f"/proc/{pid}/stat")
    if not s:
        return 0.0
    f = s.rsplit(")", 1)[1].split()
    # fields after ')' start at index 0 == field 3 (state)
    utime, stime, cutime, cstime = (int(x) for x in f[11:15])
    return (utime + stime + cutime + cstime) / CLK


def tree_stats(root: int) -> dict[str, float]:
    pids = proc_tree(root)
    return {
        "pids": len(pids),
        "cpu_s": sum(proc_cpu(p) for p in pids),
        "rss_sum": sum(proc_rss(p) for p in pids),
        "hwm_sum": sum(proc_hwm(p) for p in pids),
        "hwm_max": max([proc_hwm(p) for p in pids] or [0]),
    }


class RssSampler(threading.Thread):
    """Samples the summed RSS of a process tree; keeps the peak."""

    def __init__(self, root: int, interval: float = 0.025):
        super().__init__(daemon=True)
        self.root = root
        self.interval = interval
        self.peak = 0
        self.peak_pids = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            pids = proc_tree(self.root)
            total = sum(proc_rss(p) for p in pids)
            if total > self.peak:
                self.peak = total
                self.peak_pids = len(pids)
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()


# ------------------------------------------------------------------ fake server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeServer:
    def __init__(self, script: dict[str, Any], workdir: Path):
        RUNS_DIR.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="fakellm-", dir=RUNS_DIR))
        self.script_path = self.dir / "script.json"
        self.log_path = self.dir / "requests.jsonl"
        self.script_path.write_text(json.dumps(script))
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def __enter__(self) -> FakeServer:
        port_file = self.dir / "port"
        self.proc = subprocess.Popen(
            [sys.executable, str(FAKELLM), "--script", str(self.script_path), "--port-file", str(port_file),
             "--log", str(self.log_path), "--quiet"],
            stdout=subprocess.DEVNULL, stderr=open(self.dir / "server.err", "w"), start_new_session=True,
        )
        deadline = time.time() + 10
        while time.time() < deadline:
            if port_file.exists():
                self.port = int(port_file.read_text())
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError(f"fakellm did not start: {(self.dir / 'server.err').read_text()}")

    def __exit__(self, *exc: Any) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def requests(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line.strip()]

    def set_script(self, script: dict[str, Any]) -> None:
        self.script_path.write_text(json.dumps(script))


# ------------------------------------------------------------------ environment
def agent_env(args: argparse.Namespace, port: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    base = f"http://127.0.0.1:{port}"
    env.update(
        {
            "HOME": str(args.home),
            "BENCH_BASE_URL": base + "/v1",
            "BENCH_ANTHROPIC_BASE_URL": base,
            "BENCH_PORT": str(port),
            "BENCH_API_KEY": API_KEY,
            "BENCH_MODEL": MODEL,
            "BENCH_PROMPT": args.prompt,
            "BENCH_WORKDIR": str(args.workdir),
            "BENCH_FILE": str(args.workdir / "sample.txt"),
            "BENCH_DIR": str(BENCH_DIR),
            "BENCH_SESSION_PAIRS": str(getattr(args, "pairs", 0)),
            "OPENAI_BASE_URL": base + "/v1",
            "OPENAI_API_KEY": API_KEY,
            "ANTHROPIC_BASE_URL": base,
            "ANTHROPIC_API_KEY": API_KEY,
        }
    )
    for kv in args.env or []:
        k, _, v = kv.partition("=")
        env[k] = v
    env.update(extra or {})
    # keep agents from picking up the developer's own tmux/terminal state
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    return env


def prepare_dirs(args: argparse.Namespace) -> None:
    if args.fresh_home and args.home.exists():
        shutil.rmtree(args.home)
    args.home.mkdir(parents=True, exist_ok=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    sample = args.workdir / "sample.txt"
    if not sample.exists():
        sample.write_text("".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(200)))
    readme = args.workdir / "README.md"
    if not readme.exists():
        readme.write_text("# bench workdir\n\nA small project folder for agent benchmarks.\n")
    if args.git and not (args.workdir / ".git").exists():
        g = ["git", "-C", str(args.workdir), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        subprocess.run(g[:3] + ["init", "-q"], check=True)
        subprocess.run(g + ["add", "-A"], check=True)
        subprocess.run(g + ["commit", "-q", "-m", "init"], check=True)


def run_setup(args: argparse.Namespace, env: dict[str, str]) -> None:
    if args.setup:
        r = subprocess.run(["bash", "-c", args.setup], env=env, cwd=args.workdir, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"setup failed ({r.returncode}): {r.stdout}\n{r.stderr}")


def version_of(args: argparse.Namespace, env: dict[str, str]) -> str:
    if not args.version_cmd:
        return ""
    try:
        r = subprocess.run(["bash", "-c", args.version_cmd], env=env, cwd=args.workdir, capture_output=True,
                           text=True, timeout=60)
        return (r.stdout.strip() or r.stderr.strip()).splitlines()[0][:80] if (r.stdout or r.stderr) else ""
    except Exception as e:  # pragma: no cover
        return f"? ({e})"


# ------------------------------------------------------------------ one-shot runs
def timed_run(cmd: str, env: dict[str, str], cwd: Path, timeout: float, out_path: Path) -> dict[str, Any]:
    """Run `cmd` under bash; wall time, rusage of the whole tree, sampled peak tree RSS."""
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(["bash", "-c", cmd], env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        sampler = RssSampler(proc.pid)
        sampler.start()
        result: dict[str, Any] = {}

        def waiter() -> None:
            _, status, ru = os.wait4(proc.pid, 0)
            result["t1"] = time.perf_counter()
            result["status"] = status
            result["ru"] = ru

        w = threading.Thread(target=waiter, daemon=True)
        w.start()
        w.join(timeout)
        timed_out = w.is_alive()
        if timed_out:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            w.join(5)
        sampler.stop()
        proc.returncode = 0  # reaped by wait4 already
    # anything the agent left running in its process group goes too
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    ru = result.get("ru")
    status = result.get("status", -1)
    return {
        "wall_s": (result.get("t1", time.perf_counter()) - t0),
        "exit": os.waitstatus_to_exitcode(status) if status != -1 else None,
        "timed_out": timed_out,
        "maxrss_mb": (ru.ru_maxrss / 1024) if ru else None,  # KiB -> MiB, largest single process
        "tree_peak_rss_mb": sampler.peak / 2**20,
        "cpu_s": (ru.ru_utime + ru.ru_stime) if ru else None,
    }


def summarize(runs: list[dict[str, Any]], keys: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in keys:
        vals = [r[k] for r in runs if isinstance(r.get(k), (int, float)) and r.get(k) is not None]
        if vals:
            out[k] = {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}
    out["ok"] = sum(1 for r in runs if r.get("ok"))
    out["runs"] = len(runs)
    return out


def write_result(args: argparse.Namespace, scenario: str, version: str, runs: list[dict[str, Any]],
                 keys: list[str], params: dict[str, Any]) -> dict[str, Any]:
    scenario = args.label or scenario
    rec = {
        "agent": args.name,
        "version": version,
        "scenario": scenario,
        "params": params,
        "cmd": args.cmd,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "host": {"cpus": os.cpu_count(), "python": platform.python_version(), "machine": platform.machine()},
        "summary": summarize(runs, keys),
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    s = rec["summary"]
    parts = [f"{k}={s[k]['median']:.3f}" for k in keys if k in s]
    print(f"[{args.name}] {scenario}: ok {s['ok']}/{s['runs']}  " + "  ".join(parts), flush=True)
    return rec


def cmd_print(args: argparse.Namespace) -> None:
    prepare_dirs(args)
    marker = "ZZEND"
    script: dict[str, Any] = {"turns": [{"type": "text", "tokens": args.tokens, "tps": args.tps,
                                         "end_marker": marker}]}
    if args.prompt_tokens is not None:
        script["prompt_tokens"] = args.prompt_tokens
    runs: list[dict[str, Any]] = []
    with FakeServer(script, args.workdir) as srv:
        env = agent_env(args, srv.port)
        run_setup(args, env)
        version = version_of(args, env)
        for i in range(args.warmup + args.repeat):
            out_path = srv.dir / f"out-{i}.txt"
            r = timed_run(args.cmd, env, args.workdir, args.timeout, out_path)
            text = out_path.read_text(errors="replace")
            r["ok"] = (r["exit"] == 0 and marker in text)
            if not r["ok"]:
                print(f"  run {i}: FAILED exit={r['exit']} tail={text[-400:]!r}", file=sys.stderr)
            if i >= args.warmup:
                runs.append(r)
        reqs = srv.requests()
    params = {"tokens": args.tokens, "tps": args.tps, "requests_seen": len(reqs),
              "model_requests": sum(1 for q in reqs if q.get("api"))}
    write_result(args, "print", version, runs, ["wall_s", "maxrss_mb", "tree_peak_rss_mb", "cpu_s"], params)


def cmd_tool(args: argparse.Namespace) -> None:
    prepare_dirs(args)
    marker = "ZZEND"
    tool_args = json.loads(args.tool_args.replace("{file}", str(args.workdir / "sample.txt")))
    script = {"turns": [{"type": "tool_call", "name": args.tool_name, "args": tool_args},
                        {"type": "text", "tokens": args.final_tokens, "end_marker": marker}]}
    runs: list[dict[str, Any]] = []
    with FakeServer(script, args.workdir) as srv:
        env = agent_env(args, srv.port)
        run_setup(args, env)
        version = version_of(args, env)
        for i in range(args.warmup + args.repeat):
            n0 = len(srv.requests())
            out_path = srv.dir / f"out-{i}.txt"
            r = timed_run(args.cmd, env, args.workdir, args.timeout, out_path)
            reqs = srv.requests()[n0:]
            text = out_path.read_text(errors="replace")
            # the tool result must have reached the model: a turn-1 request that contains file content
            fed_back = any(q.get("turn") == 1 and "line 199" in json.dumps(q.get("body")) for q in reqs)
            r["model_requests"] = sum(1 for q in reqs if q.get("api"))
            r["ok"] = r["exit"] == 0 and marker in text and fed_back
            if not r["ok"]:
                print(f"  run {i}: FAILED exit={r['exit']} fed_back={fed_back} tail={text[-400:]!r}",
                      file=sys.stderr)
            if i >= args.warmup:
                runs.append(r)
    params = {"tool": args.tool_name, "final_tokens": args.final_tokens}
    write_result(args, "tool", version, runs, ["wall_s", "maxrss_mb", "tree_peak_rss_mb", "cpu_s"], params)


# ------------------------------------------------------------------ TUI runs
class Tmux:
    """A private tmux server (own socket, no user config) running one pane."""

    CONF = "set -g status off\nset -g default-terminal tmux-256color\nset -g escape-time 10\n" \
           "set -g history-limit 5000\n"

    def __init__(self, tag: str, size: tuple[int, int]):
        self.sock = f"bench-{os.getpid()}-{tag}"
        self.size = size
        self.session = "bench"
        self.dir = Path(tempfile.mkdtemp(prefix="benchtmux-"))
        (self.dir / "tmux.conf").write_text(self.CONF)
        self.fifo = self.dir / "go"
        os.mkfifo(self.fifo)

    def tmux(self, *a: str, check: bool = True) -> str:
        r = subprocess.run(["tmux", "-L", self.sock, *a], capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"tmux {a}: {r.stderr}")
        return r.stdout

    def start(self, cmd: str, env: dict[str, str], cwd: Path) -> None:
        """Create the pane; the agent starts only when go() is called."""
        launcher = self.dir / "launch.sh"
        lines = ["#!/bin/bash"]
        for k, v in env.items():
            # the pane's terminal type and size come from tmux, not from the caller
            if k in ("TERM", "COLUMNS", "LINES", "TERM_PROGRAM", "TERM_PROGRAM_VERSION"):
                continue
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                lines.append(f"export {k}={shlex.quote(v)}")
        lines.append(f"cd {shlex.quote(str(cwd))}")
        lines.append(f"read -r _ < {shlex.quote(str(self.fifo))}")
        lines.append(f"exec bash -c {shlex.quote(cmd)}")
        launcher.write_text("\n".join(lines) + "\n")
        w, h = self.size
        subprocess.run(["tmux", "-L", self.sock, "-f", str(self.dir / "tmux.conf"), "new-session", "-d", "-s",
                        self.session, "-x", str(w), "-y", str(h), f"exec bash {shlex.quote(str(launcher))}"],
                       check=True, env={k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")})
        self.tmux("set-option", "-t", self.session, "remain-on-exit", "on", check=False)
        self.pid = int(self.tmux("display-message", "-p", "-t", self.session, "#{pane_pid}").strip())

    def go(self) -> float:
        t0 = time.perf_counter()
        fd = os.open(self.fifo, os.O_WRONLY)
        os.write(fd, b"go\n")
        os.close(fd)
        return t0

    def capture(self) -> str:
        r = subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p", "-t", self.session],
                           capture_output=True, text=True)
        return r.stdout

    def dead(self) -> bool:
        out = self.tmux("display-message", "-p", "-t", self.session, "#{pane_dead}", check=False).strip()
        return out == "1"

    def send_text(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.session, "-l", text)

    def send_keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.session, *keys)

    def kill(self) -> None:
        pids = proc_tree(self.pid) if getattr(self, "pid", None) else []
        self.tmux("kill-server", check=False)
        deadline = time.time() + 3
        while time.time() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
            time.sleep(0.05)
        for p in pids:  # our own agent processes that ignored SIGHUP
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


class FrameLog:
    def __init__(self, path: Path | None):
        self.f = open(path, "w") if path else None
        self.last = None

    def add(self, t: float, frame: str) -> None:
        if self.f and frame != self.last:
            self.f.write(f"=== t={t:.3f}s\n{frame}\n")
            self.last = frame

    def close(self) -> None:
        if self.f:
            self.f.close()


def wait_screen(tm: Tmux, t0: float, pattern: re.Pattern[str] | list[re.Pattern[str]], timeout: float,
                poll: float, frames: FrameLog) -> tuple[float | None, str]:
    """Poll until every pattern matches the screen; returns (seconds since t0, frame)."""
    pats = pattern if isinstance(pattern, list) else [pattern]
    deadline = time.perf_counter() + timeout
    frame = ""
    while True:
        t = time.perf_counter()
        frame = tm.capture()
        frames.add(t - t0, frame)
        if all(p.search(frame) for p in pats):
            return t - t0, frame
        if t > deadline or tm.dead():
            return None, frame
        nxt = t + poll
        d = nxt - time.perf_counter()
        if d > 0:
            time.sleep(d)


def wait_stable(tm: Tmux, t0: float, frame: str, t_frame: float, stable: float, timeout: float, poll: float,
                frames: FrameLog) -> float | None:
    """Wait until the screen stops changing for `stable` s; returns when (since t0) the final frame appeared."""
    last, t_last = frame, t_frame
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        time.sleep(poll)
        t = time.perf_counter() - t0
        f = tm.capture()
        frames.add(t, f)
        if f != last:
            last, t_last = f, t
        elif t - t_last >= stable:
            return t_last
    return None


def cpu_now(pid: int) -> float:
    return tree_stats(pid)["cpu_s"]


def tui_session(args: argparse.Namespace, env: dict[str, str], cmd: str, run_idx: int, frames_dir: Path | None,
                prompt: str | None, extra_ready: list[str]) -> dict[str, Any]:
    w, h = (int(x) for x in args.size.lower().split("x"))
    tm = Tmux(f"{args.name}-{run_idx}", (w, h))
    frames = FrameLog(frames_dir / f"frames-{run_idx}.txt" if frames_dir else None)
    r: dict[str, Any] = {"ok": False}
    poll = args.poll_ms / 1000
    try:
        tm.start(cmd, env, args.workdir)
        t0 = tm.go()
        ready_pats = [re.compile(args.ready_regex, re.M)] + [re.compile(x, re.M) for x in extra_ready]
        t_ready, frame = wait_screen(tm, t0, ready_pats, args.ready_timeout, poll, frames)
        if t_ready is None:
            r["error"] = "ready marker not seen"
            r["last_frame"] = frame[-2000:]
            return r
        r["ready_s"] = t_ready
        # CPU spent until then: under load the wall time mostly measures the other processes
        r["ready_cpu_s"] = cpu_now(tm.pid)
        t_stable = wait_stable(tm, t0, frame, t_ready, args.stable_ms / 1000, args.stable_timeout, poll, frames)
        r["ready_stable_s"] = t_stable
        st = tree_stats(tm.pid)
        r["startup_cpu_s"] = st["cpu_s"]
        r["startup_rss_mb"] = st["rss_sum"] / 2**20
        if prompt is not None:
            cpu0 = st["cpu_s"]
            end_pat = re.compile(r"\bZZEND\b")
            # any streamed word ("alpha0", "beta1", ...): the first token may scroll off before a poll sees it
            first_pat = re.compile(r"\b(?:" + "|".join(STREAM_WORDS) + r")\d+\b")
            ts = time.perf_counter()
            tm.send_text(prompt)
            for k in args.submit_keys.split():
                tm.send_keys(k)
            t_first = t_done = None
            deadline = ts + args.timeout
            while True:
                t = time.perf_counter()
                frame = tm.capture()
                frames.add(t - ts, frame)
                if t_first is None and first_pat.search(frame):
                    t_first = t - ts
                if end_pat.search(frame):
                    t_done = t - ts
                    break
                if t > deadline or tm.dead():
                    break
                d = t + poll - time.perf_counter()
                if d > 0:
                    time.sleep(d)
            r["first_token_s"] = t_first
            if t_done is None:
                r["error"] = "last token not seen"
                r["last_frame"] = frame[-2000:]
                return r
            r["reply_s"] = t_done
            r["reply_stable_s"] = wait_stable(tm, ts, frame, t_done, args.stable_ms / 1000, args.stable_timeout,
                                              poll, frames)
            c1 = cpu_now(tm.pid)
            r["reply_cpu_s"] = c1 - cpu0
            # idle: no input, reply done; spinners, cursor blink, polling all show up here
            time.sleep(args.idle_s)
            r["idle_cpu_pct"] = 100 * (cpu_now(tm.pid) - c1) / args.idle_s
        st = tree_stats(tm.pid)
        r["peak_rss_mb"] = st["hwm_sum"] / 2**20  # sum over the tree of each process's own peak
        r["largest_proc_peak_rss_mb"] = st["hwm_max"] / 2**20
        r["procs"] = st["pids"]
        r["total_cpu_s"] = st["cpu_s"]
        r["ok"] = True
        return r
    finally:
        frames.close()
        tm.kill()


def cmd_tui(args: argparse.Namespace) -> None:
    prepare_dirs(args)
    script = {"turns": [{"type": "text", "tokens": args.tokens, "tps": args.tps, "end_marker": "ZZEND"}],
              "side_reply": "Benchmark session"}
    runs = []
    frames_dir = args.frames_dir
    if frames_dir:
        frames_dir.mkdir(parents=True, exist_ok=True)
    with FakeServer(script, args.workdir) as srv:
        env = agent_env(args, srv.port)
        run_setup(args, env)
        version = version_of(args, env)
        for i in range(args.warmup + args.repeat):
            r = tui_session(args, env, args.cmd, i, frames_dir, args.prompt, [])
            if not r["ok"]:
                print(f"  run {i}: FAILED {r.get('error')}\n{r.get('last_frame', '')}", file=sys.stderr)
            if i >= args.warmup:
                runs.append(r)
    keys = ["ready_s", "ready_cpu_s", "ready_stable_s", "startup_cpu_s", "first_token_s", "reply_s", "reply_stable_s",
            "reply_cpu_s", "idle_cpu_pct", "peak_rss_mb", "largest_proc_peak_rss_mb"]
    write_result(args, "tui", version, runs, keys, {"tokens": args.tokens, "tps": args.tps, "size": args.size,
                                                     "ready_regex": args.ready_regex})


def cmd_resume(args: argparse.Namespace) -> None:
    prepare_dirs(args)
    script = {"turns": [{"type": "text", "tokens": 20, "end_marker": "ZZEND"}], "side_reply": "Benchmark session"}
    runs = []
    frames_dir = args.frames_dir
    if frames_dir:
        frames_dir.mkdir(parents=True, exist_ok=True)
    with FakeServer(script, args.workdir) as srv:
        env = agent_env(args, srv.port)
        run_setup(args, env)
        version = version_of(args, env)
        # the session is made once; --session-gen must be idempotent-safe to call again
        t = time.perf_counter()
        r = subprocess.run(["bash", "-c", args.session_gen], env=env, cwd=args.workdir, capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise SystemExit(f"session-gen failed: {r.stdout}\n{r.stderr}")
        gen_info = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        print(f"  session made in {time.perf_counter() - t:.2f}s: {gen_info}", flush=True)
        for i in range(args.warmup + args.repeat):
            if args.session_reset:
                subprocess.run(["bash", "-c", args.session_reset], env=env, cwd=args.workdir, check=False)
            r2 = tui_session(args, env, args.cmd, i, frames_dir, None, [args.content_regex])
            if not r2["ok"]:
                print(f"  run {i}: FAILED {r2.get('error')}\n{r2.get('last_frame', '')}", file=sys.stderr)
            if i >= args.warmup:
                runs.append(r2)
    keys = ["ready_s", "ready_cpu_s", "ready_stable_s", "startup_cpu_s", "peak_rss_mb", "largest_proc_peak_rss_mb"]
    write_result(args, "resume", version, runs, keys, {"pairs": args.pairs, "size": args.size,
                                                        "session": gen_info, "ready_regex": args.ready_regex,
                                                        "content_regex": args.content_regex})


# ------------------------------------------------------------------ report
def fmt(s: dict[str, Any], key: str, unit: str = "", nd: int = 2) -> str:
    if key not in s:
        return "–"
    v = s[key]
    return f"{v['median']:.{nd}f} ({v['min']:.{nd}f}–{v['max']:.{nd}f})"


def cmd_report(args: argparse.Namespace) -> None:
    recs = []
    for p in args.inputs:
        for line in Path(p).read_text().splitlines():
            if line.strip():
                recs.append(json.loads(line))
    # last record wins per (agent, scenario)
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for r in recs:
        latest[(r["agent"], r["scenario"])] = r
    agents: list[str] = []
    for a, _ in latest:
        if a not in agents:
            agents.append(a)
    L: list[str] = []
    L.append("Cells: median (min–max) over the runs; `ok` = runs that passed their check / runs.\n")

    def table(scenario: str, title: str, cols: list[tuple[str, str, int]]) -> None:
        rows = [(a, latest[(a, scenario)]) for a in agents if (a, scenario) in latest]
        if not rows:
            return
        L.append(f"### {title}\n")
        L.append("| agent | version | ok | " + " | ".join(c[1] for c in cols) + " |")
        L.append("|---|---|---|" + "---|" * len(cols))
        for a, r in rows:
            s = r["summary"]
            cells = [fmt(s, k, nd=nd) for k, _, nd in cols]
            L.append(f"| {a} | {r.get('version', '')} | {s['ok']}/{s['runs']} | " + " | ".join(cells) + " |")
        L.append("")

    table("print", "a. print mode round trip (200 tokens, max speed)",
          [("wall_s", "wall s", 2), ("maxrss_mb", "peak RSS MiB (largest proc)", 0),
           ("tree_peak_rss_mb", "peak RSS MiB (whole tree, sampled)", 0), ("cpu_s", "CPU s", 2)])
    table("tool", "b. tool loop (read a file, then 50 tokens)",
          [("wall_s", "wall s", 2), ("maxrss_mb", "peak RSS MiB (largest proc)", 0),
           ("tree_peak_rss_mb", "peak RSS MiB (whole tree, sampled)", 0), ("cpu_s", "CPU s", 2)])
    table("tui", "c. interactive TUI (120x40; 500 tokens at max speed)",
          [("ready_s", "ready marker s", 3), ("ready_stable_s", "first stable frame s", 3),
           ("startup_cpu_s", "startup CPU s", 2), ("first_token_s", "first token on screen s", 3),
           ("reply_s", "last token on screen s", 3), ("reply_cpu_s", "reply CPU s", 2),
           ("idle_cpu_pct", "idle CPU %", 1), ("peak_rss_mb", "peak RSS MiB (tree)", 0)])
    table("tui-paced", "c2. interactive TUI, reply paced at 100 tokens/s (500 tokens = 5 s of streaming)",
          [("ready_s", "ready marker s", 3), ("first_token_s", "first token on screen s", 3),
           ("reply_s", "last token on screen s", 3), ("reply_cpu_s", "CPU during the 5 s reply s", 2),
           ("idle_cpu_pct", "idle CPU %", 1), ("peak_rss_mb", "peak RSS MiB (tree)", 0)])
    table("resume", "d. resume a large session",
          [("ready_s", "ready + last message s", 3), ("ready_stable_s", "first stable frame s", 3),
           ("startup_cpu_s", "startup CPU s", 2), ("peak_rss_mb", "peak RSS MiB (tree)", 0)])
    table("resume-print", "d2. print mode on the large session (--continue -p: load it, send all of it once)",
          [("wall_s", "wall s", 2), ("maxrss_mb", "peak RSS MiB (largest proc)", 0),
           ("tree_peak_rss_mb", "peak RSS MiB (whole tree, sampled)", 0), ("cpu_s", "CPU s", 2)])
    text = "\n".join(L)
    if args.output:
        Path(args.output).write_text(text)
    print(text)


# ------------------------------------------------------------------ CLI
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="scenario", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--name", required=True, help="label for the agent")
        p.add_argument("--cmd", required=True, help="agent command (bash; may use $BENCH_* variables)")
        p.add_argument("--setup", help="bash command run once before measuring (writes config into $HOME)")
        p.add_argument("--version-cmd", help="bash command printing the agent's version")
        p.add_argument("--home", type=Path, help="isolated HOME (default $BENCH_SCRATCH/bench-homes/NAME-SCENARIO)")
        p.add_argument("--workdir", type=Path, help="agent cwd (default $BENCH_SCRATCH/bench-work/NAME)")
        p.add_argument("--fresh-home", action=argparse.BooleanOptionalAction, default=True,
                       help="wipe --home before the scenario (default on)")
        p.add_argument("--git", action=argparse.BooleanOptionalAction, default=True,
                       help="make the workdir a git repository with one commit (default on)")
        p.add_argument("--repeat", type=int, default=5)
        p.add_argument("--warmup", type=int, default=1, help="unmeasured runs first (default 1)")
        p.add_argument("--timeout", type=float, default=120)
        p.add_argument("--prompt", default="hello")
        p.add_argument("--env", action="append", help="extra K=V for the agent (repeatable)")
        p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="append the result (JSON line) here")
        p.add_argument("--label", help="scenario name in the results (default: the subcommand)")

    def tui_opts(p: argparse.ArgumentParser) -> None:
        p.add_argument("--ready-regex", required=True, help="regex (re.M) on the screen text: agent accepts input")
        p.add_argument("--size", default="120x40")
        p.add_argument("--poll-ms", type=float, default=10)
        p.add_argument("--stable-ms", type=float, default=300, help="no change for this long = stable")
        p.add_argument("--ready-timeout", type=float, default=60, help="give up on the ready marker after this")
        p.add_argument("--stable-timeout", type=float, default=10)
        p.add_argument("--frames-dir", type=Path, help="write every distinct frame here (debugging markers)")

    p = sub.add_parser("print", help="print-mode round trip")
    common(p)
    p.add_argument("--tokens", type=int, default=200)
    p.add_argument("--tps", type=float, default=0)
    p.add_argument("--prompt-tokens", type=int, help="usage the server reports for the prompt (default ~len/4)")
    p.set_defaults(func=cmd_print)

    p = sub.add_parser("tool", help="tool loop in print mode")
    common(p)
    p.add_argument("--tool-name", required=True)
    p.add_argument("--tool-args", required=True, help='JSON; "{file}" is replaced by the file path')
    p.add_argument("--final-tokens", type=int, default=50)
    p.set_defaults(func=cmd_tool)

    p = sub.add_parser("tui", help="interactive startup and streamed reply")
    common(p)
    tui_opts(p)
    p.add_argument("--tokens", type=int, default=500)
    p.add_argument("--tps", type=float, default=0)
    p.add_argument("--submit-keys", default="Enter", help="tmux key names sent after the prompt text")
    p.add_argument("--idle-s", type=float, default=2.0, help="idle window after the reply for idle CPU")
    p.set_defaults(func=cmd_tui)

    p = sub.add_parser("resume", help="TUI startup on a large saved session")
    common(p)
    tui_opts(p)
    p.add_argument("--session-gen", required=True, help="bash command that writes the session into $HOME")
    p.add_argument("--session-reset", help="bash command run before each run (e.g. restore the session file)")
    p.add_argument("--content-regex", required=True, help="regex that shows the resumed conversation is drawn")
    p.add_argument("--pairs", type=int, default=2000)
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("report", help="markdown table from raw results")
    p.add_argument("inputs", nargs="*", default=[str(DEFAULT_OUT)])
    p.add_argument("-o", "--output")
    p.set_defaults(func=cmd_report)

    args = ap.parse_args()
    # on SIGTERM/SIGHUP unwind normally, so tmux servers and fake servers are torn down
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, f: sys.exit(128 + s))
    if args.scenario != "report":
        if args.home is None:
            args.home = SCRATCH / "bench-homes" / f"{args.name}-{args.scenario}"
        if args.workdir is None:
            suffix = "-resume" if args.scenario == "resume" else ""
            args.workdir = SCRATCH / "bench-work" / f"{args.name}{suffix}"
        args.home = args.home.resolve()
        args.workdir = args.workdir.resolve()
    args.func(args)


if __name__ == "__main__":
    main()
