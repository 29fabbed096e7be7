"""Benchmark: what the permission check adds to a tool call (target: < 1 ms).

Run: ``python tests/perf/bench_permissions.py [--calls 20000] [--rules 30]``.

Two figures per kind of call (a read, an edit, a simple and a compound shell command, a
line with a substitution, an extension tool), in microseconds per call, medians of 7
rounds:

- **policy**: :func:`wolli.permissions.policy.evaluate` alone, against ``--rules`` rules of
  every kind (shell prefixes, path globs in the project and the home folder, MCP names);
- **gate**: what a live session's gate does before a call runs: the first check, the
  rules re-read only if a source file changed (two ``stat`` calls), and the final check on
  the arguments as they will run, in ``accept-edits`` mode with the rules allowing the
  call (so no question is asked).

In process, after a warm-up; not a pass/fail test (CONTRIBUTING.md, Benchmarks).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

CALLS = {
    "read": ("read", {"path": "src/app/models.py"}),
    "edit": ("edit", {"path": "src/app/models.py", "edits": [{"old_text": "a", "new_text": "b"}]}),
    "bash simple": ("bash", {"command": "git diff --stat HEAD~1"}),
    "bash compound": ("bash", {"command": "cd src && npm run test -- --watch=false 2>&1 | tail -n 40"}),
    "bash $(...)": ("bash", {"command": "echo $(git rev-parse HEAD) > /dev/null"}),
    "extension tool": ("mcp__github__get_issue", {"number": 12}),
}


def rule_texts(count: int) -> dict[str, list[str]]:
    allow = ["Bash(git diff:*)", "Bash(git status)", "Bash(npm run test:*)", "Bash(tail:*)", "Bash(cd:*)",
             "Bash(echo:*)", "Edit(src/**)", "Read(~/notes/**)", "mcp__github"]
    deny = ["Read(~/.ssh/**)", "Read(.env)", "Bash(rm -rf:*)", "Bash(curl:*)", "Edit(/vendor/**)"]
    ask = ["Bash(git push:*)", "Bash(npm publish:*)"]
    index = 0
    while len(allow) + len(deny) + len(ask) < count:
        index += 1
        allow.append(f"Bash(tool{index} sub:*)")
        deny.append(f"Edit(generated{index}/**)")
    return {"allow": allow, "deny": deny, "ask": ask}


def bench_policy(calls: int, rules: int) -> dict[str, float]:
    from wolli.permissions.path_rules import Where
    from wolli.permissions.policy import Context, RuleSet, SourcedRule, ToolFacts, evaluate
    from wolli.permissions.rules import parse_rule

    ruleset = RuleSet(SourcedRule(parse_rule(t), kind, "user") for kind, texts in rule_texts(rules).items()  # type: ignore[arg-type]
                      for t in texts)
    context = Context("accept-edits", Where.here(os.getcwd()))
    out = {}
    for label, (name, arguments) in CALLS.items():
        facts = ToolFacts(name)
        for _ in range(200):
            evaluate(facts, arguments, ruleset, context)
        rounds = []
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(calls // 7):
                evaluate(facts, arguments, ruleset, context)
            rounds.append((time.perf_counter() - start) / (calls // 7))
        out[label] = statistics.median(rounds) * 1e6
    return out


async def bench_gate(calls: int, rules: int) -> dict[str, float]:
    import json

    from wolli.testing import ExtensionHarness

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = tmp
        project = Path(tmp) / "project"
        (project / "src" / "app").mkdir(parents=True)
        async with ExtensionHarness([], cwd=project, permission_mode="accept-edits") as h:
            agent = h.host.home
            agent.mkdir(parents=True, exist_ok=True)
            (agent / "settings.json").write_text(json.dumps({"permissions": rule_texts(rules)}))
            h.host.settings.reload()
            gate = h.session.permissions.gate
            for label, (name, arguments) in CALLS.items():
                if label == "bash $(...)":
                    continue  # asks (no rule can vouch for it): a question is not a cost of the check
                async def once(name: str = name, arguments: dict = arguments) -> None:
                    refused = gate.precheck(name, None, arguments)
                    assert refused is None, refused
                    refused = await gate.decide("call", name, None, arguments)
                    assert refused is None, refused.reason
                for _ in range(200):
                    await once()
                rounds = []
                for _ in range(7):
                    start = time.perf_counter()
                    for _ in range(calls // 70):
                        await once()
                    rounds.append((time.perf_counter() - start) / (calls // 70))
                out[label] = statistics.median(rounds) * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rules", type=int, default=30)
    args = parser.parse_args()
    policy = bench_policy(args.calls, args.rules)
    gate = asyncio.run(bench_gate(args.calls, args.rules))
    print(f"permission check per tool call, {args.rules} rules; load average {os.getloadavg()[0]:.2f}")
    print(f"{'call':<18}{'policy µs':>11}{'gate µs':>10}")
    for label in CALLS:
        shown = f"{gate[label]:10.1f}" if label in gate else f"{'(asks)':>10}"
        print(f"{label:<18}{policy[label]:11.1f}{shown}")


if __name__ == "__main__":
    main()
