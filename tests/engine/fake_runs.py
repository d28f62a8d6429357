"""Stand-ins for ``payment-conformance run`` subprocesses, so selftest tests take seconds.

``fake_command(behaviours)`` is a ``selftest.Command``: each run starts a tiny Python process
that behaves as ``behaviours[run name]`` says (default ``pass``):

- ``pass``: results.json with every requirement passed, exit 0
- ``fail:ID,ID``: those requirements failed, exit 1
- ``usage``: prints an ``error:`` line and exits 2, as ``run`` does when it cannot run
- ``crash``: a traceback and exit code 3, no results
- ``hang``: writes its pid to ``<report dir>.pid`` and sleeps
- ``barrier:N``: waits (at most 20 s) until N runs are running at once, then passes
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from conformance.engine.selftest import Command, RunSpec
from conformance.reference.faults import Fault

SCRIPT = r"""
import json, os, sys, time
from pathlib import Path

report_dir, behaviour, barrier_dir = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
ids = ["AUTH-016", "PAY-STATE-001", "PAY-STATE-002", "SHAPE-001"]

def results(failed, code):
    report_dir.mkdir(parents=True)
    every = ids + [f for f in failed if f not in ids]
    requirements = [{"id": i, "outcome": "failed" if i in failed else "passed"} for i in every]
    document = {"duration_s": 0.05, "requests_sent": 7, "requirements": requirements,
                "first_failure_s": 0.02 if failed else None}
    (report_dir / "results.json").write_text(json.dumps(document))
    sys.exit(code)

if behaviour == "pass":
    results([], 0)
if behaviour.startswith("fail:"):
    results(behaviour[5:].split(","), 1)
if behaviour == "usage":
    print("error: the embedded reference server cannot start: port taken")
    sys.exit(2)
if behaviour == "crash":
    print("Traceback (most recent call last):\nRuntimeError: boom")
    sys.exit(3)
if behaviour == "hang":
    # written whole, then renamed: a reader never finds the file empty
    written = Path(str(report_dir) + ".pid.part")
    written.write_text(str(os.getpid()))
    os.replace(written, str(report_dir) + ".pid")
    time.sleep(600)
if behaviour.startswith("barrier:"):
    wanted = int(behaviour[8:])
    barrier_dir.mkdir(exist_ok=True)
    (barrier_dir / str(os.getpid())).touch()
    deadline = time.monotonic() + 20
    while len(list(barrier_dir.iterdir())) < wanted and time.monotonic() < deadline:
        time.sleep(0.02)
    results([] if len(list(barrier_dir.iterdir())) >= wanted else ["SHAPE-001"], 0)
raise SystemExit(f"unknown behaviour {behaviour}")
"""


def fake_command(behaviours: Mapping[str, str]) -> Command:
    def command(spec: RunSpec, report_dir: Path) -> list[str]:
        behaviour = behaviours.get(spec.name, "pass")
        barrier = report_dir.parent.parent / "barrier"
        return [sys.executable, "-c", SCRIPT, str(report_dir), behaviour, str(barrier)]

    return command


def fault(name: str, category: str, *breaks: str) -> Fault:
    return Fault(name, category, f"the {name} bug", tuple(breaks), "test.yaml")


FAULTS = (
    fault("pay-cancel-after-paid", "state", "PAY-STATE-001"),
    fault("pay-expire-twice", "state", "PAY-STATE-002"),
    fault("auth-nonce-not-checked", "auth", "AUTH-016"),
)
