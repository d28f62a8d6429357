"""The flake gate: the suite, run again and again with new seeds, never fails a correct server.

    python -m benchmarks.flakes [--runs 20] [--quick] [--first-seed S]
        [--workers N] [--escape-reading refuse|literal|alternate] [--profile P] [--report FILE]

Each run is a ``payment-conformance run`` subprocess against the unfaulted embedded reference
server, seeds S, S+1, ... (S drawn and printed unless given). A subprocess per run, as a user
runs it: nothing one run leaves in the interpreter (hypothesis state, imported modules, threads)
can hide or cause a failure of the next. Prints a line per run and exits 1 when any run failed
a requirement or did not finish, naming each such seed with the command that repeats its run;
0 when every run was conformant; 2 on bad arguments. The reports of a run that was not
conformant are kept in ``reports/flakes/seed-<seed>/``. ``nox -s flakes`` runs 20 default runs;
CI runs 3 quick ones. ``--escape-reading`` chooses how the server reads a malformed
percent-escape (``run --server-escape-reading``): ``alternate`` reads it literally in every
second run, so that both readings the default profile allows are shown conformant.
``--profile`` runs the suite, and its embedded server, under another profile (CI runs the gate
under ``divergent`` too).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RUN_TIMEOUT_S = {True: 900.0, False: 2400.0}  # for a run that hangs, never a slow one
KEPT = Path("reports") / "flakes"  # the reports of every run that was not conformant


@dataclass(frozen=True)
class FlakeRun:
    seed: int
    verdict: str  # CONFORMANT, NOT CONFORMANT, INCOMPLETE, or ERROR (no results)
    exit_code: int | None
    wall_s: float
    failed: list[str] = field(default_factory=list)
    exercised: str = ""  # "331 of 333"
    requests: int | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.verdict == "CONFORMANT" and not self.failed


Runner = Callable[[int, bool, "int | None", "str | None", "str | None"], FlakeRun]
READINGS = ("refuse", "literal", "alternate")


def run_command(
    seed: int,
    quick: bool,
    workers: int | None,
    report_dir: Path | None = None,
    escape_reading: str | None = None,
    profile: str | None = None,
) -> list[str]:
    argv = ["payment-conformance", "run", "--seed", str(seed)]
    if profile is not None:
        argv += ["--profile", profile]
    if quick:
        argv.append("--quick")
    if workers is not None:
        argv += ["--workers", str(workers)]
    if escape_reading is not None:
        argv += ["--server-escape-reading", escape_reading]
    if report_dir is not None:
        argv += ["--no-progress", "--report-dir", str(report_dir)]
    return argv


def run_once(
    seed: int,
    quick: bool,
    workers: int | None,
    escape_reading: str | None = None,
    profile: str | None = None,
) -> FlakeRun:
    with tempfile.TemporaryDirectory(prefix="payment-conformance-flakes-") as scratch:
        reports = Path(scratch) / "reports"
        argv = [
            sys.executable,
            "-m",
            "conformance",
            *run_command(seed, quick, workers, reports, escape_reading, profile)[1:],
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        started = time.perf_counter()
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT_S[quick],
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            wall = time.perf_counter() - started
            return FlakeRun(seed, "ERROR", None, wall, message=f"killed after {wall:.0f} s")
        wall = time.perf_counter() - started
        try:
            data: dict[str, Any] = json.loads(
                (reports / "results.json").read_text(encoding="utf-8")
            )
        except (OSError, ValueError):
            last = (done.stdout + done.stderr).strip().splitlines()
            return FlakeRun(
                seed, "ERROR", done.returncode, wall, message=last[-1] if last else "no output"
            )
        failed = [
            str(r.get("id"))
            for r in data.get("requirements", [])
            if isinstance(r, dict) and r.get("outcome") == "failed"
        ]
        if failed or done.returncode != 0:
            keep = KEPT / f"seed-{seed}"
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(reports, keep)
        return FlakeRun(
            seed,
            str(data.get("verdict", "ERROR")),
            done.returncode,
            wall,
            failed,
            exercised_text(data),
            data.get("requests_sent"),
            str(data.get("incomplete_reason") or ""),
        )


def exercised_text(data: dict[str, Any]) -> str:
    """How many requirements a results.json exercised, as "332 of 333" (the bare count when
    the total is missing)."""
    exercised = data.get("requirements_exercised")
    if not isinstance(exercised, int):
        return ""
    counts = data.get("counts")
    requirements = counts.get("requirements") if isinstance(counts, dict) else None
    total = requirements.get("total") if isinstance(requirements, dict) else None
    return f"{exercised} of {total}" if isinstance(total, int) else str(exercised)


def main(argv: Sequence[str] | None = None, runner: Runner = run_once) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.flakes")
    parser.add_argument("--runs", type=int, default=20, help="How many runs (default 20).")
    parser.add_argument("--quick", action="store_true", help="Quick runs.")
    parser.add_argument("--first-seed", type=int, help="Seeds S, S+1, ... (default: drawn).")
    parser.add_argument("--workers", type=int, help="Test processes per run (default: run's).")
    parser.add_argument(
        "--escape-reading",
        choices=READINGS,
        help="How the server reads a malformed percent-escape: refuse (the server's default), "
        "literal, or alternate (literal in every second run).",
    )
    parser.add_argument(
        "--profile", help="Every run, and its embedded server, under this profile (run --profile)."
    )
    parser.add_argument("--report", type=Path, help="Write every run's result as JSON here.")
    args = parser.parse_args(argv)  # argparse says what is wrong and exits 2
    for name in ("runs", "workers"):
        value = getattr(args, name)
        if value is not None and value < 1:
            print(f"error: --{name} must be at least 1, not {value}", file=sys.stderr)
            return 2
    if args.first_seed is not None and args.first_seed < 0:
        print(f"error: --first-seed must not be negative, not {args.first_seed}", file=sys.stderr)
        return 2
    first = args.first_seed if args.first_seed is not None else random.randrange(2**31 - args.runs)
    kind = "quick" if args.quick else "default"
    under = f" under profile {args.profile}" if args.profile is not None else ""
    print(
        f"{args.runs} {kind} runs against the unfaulted reference server{under}, "
        f"seeds {first}..{first + args.runs - 1}"
    )
    runs: list[FlakeRun] = []
    readings: dict[int, str | None] = {}
    for index, seed in enumerate(range(first, first + args.runs)):
        reading = args.escape_reading
        if reading == "alternate":
            reading = "literal" if index % 2 else "refuse"
        readings[seed] = reading
        run = runner(seed, args.quick, args.workers, reading, args.profile)
        runs.append(run)
        failed = ", ".join(run.failed) or "-"
        shown = f"  escapes {reading:<7}" if reading is not None else ""
        print(
            f"seed {seed:>10}{shown}  {run.verdict:<15} exercised {run.exercised or '?':<11} "
            f"requests {run.requests if run.requests is not None else '?':>6}  "
            f"{run.wall_s:6.1f} s  "
            f"failed: {failed}" + (f"  ({run.message})" if run.message else ""),
            flush=True,
        )
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(
            json.dumps([asdict(r) for r in runs], indent=2) + "\n", encoding="utf-8"
        )
    bad = [r for r in runs if not r.ok]
    walls = sorted(r.wall_s for r in runs)
    print(
        f"{len(runs) - len(bad)} of {len(runs)} runs conformant; "
        f"median wall {walls[len(walls) // 2]:.1f} s"
    )
    for run in bad:
        print(
            f"FLAKE seed {run.seed}: {run.verdict}; repeat it with: "
            + " ".join(
                run_command(
                    run.seed, args.quick, args.workers, None, readings.get(run.seed), args.profile
                )
            )
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
