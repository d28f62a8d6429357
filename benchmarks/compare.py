"""Our suite against plain schemathesis, over the whole reference fault catalogue.

    python -m benchmarks.compare [--seeds 3] [--jobs 2] [--faults a,b]
        [--categories x,y] [--tools quick,default,schemathesis] [--out reports/comparison]
        [--resume]

Three tools (``compare_tools``): our ``run --quick``, our default ``run`` and plain
``schemathesis run`` over the project's OpenAPI document (all checks and phases, signed as the
suite signs, fresh Idempotency-Keys). First each tool runs against the unfaulted reference
server once per seed, whole: its wall time, and its false alarms (a failure there is one).
Schemathesis' unfaulted runs get the time our default run takes (the median of its unfaulted
runs) as their ``--max-time``. Then every tool runs once per fault and stops at its first
failure, ours first: on each fault schemathesis gets the time our default run took on it (to its
first failure, or whole when it caught nothing), the same time per fault. For schemathesis only
a failure its unfaulted runs never raised counts.

Per tool it reports faults caught per category, false alarms per seed, the median wall time of
a whole run and the median time to the first failure over the faults caught; the raw records go
to ``<out>/comparison.json`` (written after every run: ``--resume`` skips the runs already
there) and the table to ``<out>/comparison.md``. Exit 0 when every run gave a result, 1 when
one ended in an error or a timeout, 2 on bad arguments, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.compare_tools import TOOLS, Children, Job, Record, run_job
from conformance.engine.selftest import SelftestError, select_faults
from conformance.reference.faults import CATEGORIES, catalogue

SCHEMA = "payment-conformance-comparison/1"
DEFAULT_OUT = Path("reports") / "comparison"
TOOL_TITLES = {
    "quick": "payment-conformance run --quick",
    "default": "payment-conformance run",
    "schemathesis": "schemathesis run (plain)",
}
Runner = Callable[[Job, Children, "frozenset[str] | None"], Record]


class CompareError(Exception):
    """Bad arguments: exit 2."""


@dataclass(frozen=True)
class Settings:
    seeds: tuple[int, ...]
    jobs: int
    tools: tuple[str, ...]
    faults: tuple[tuple[str, str], ...]  # (name, category)
    out: Path
    resume: bool = False
    budget_s: float | None = None  # schemathesis' time per run; None: our default run's median


class Ledger:
    """The raw records, saved to ``comparison.json`` after each one."""

    def __init__(self, path: Path, settings: Settings, machine: dict[str, Any]) -> None:
        self.path = path
        self.settings = settings
        self.machine = machine
        self.records: dict[str, Record] = {}
        self.budget_s: float | None = None
        self._lock = threading.Lock()

    def load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            raise CompareError(f"cannot resume from {self.path}: {exc}") from None
        for raw in data.get("records", []):
            record = Record.from_dict(raw)
            if record.status == "ok":
                self.records[record.key] = record

    def add(self, record: Record) -> None:
        with self._lock:
            self.records[record.key] = record
            self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "schema": SCHEMA,
            "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "machine": self.machine,
            "settings": {
                "seeds": list(self.settings.seeds),
                "jobs": self.settings.jobs,
                "tools": list(self.settings.tools),
                "faults": len(self.settings.faults),
                "schemathesis_budget_s": self.budget_s,
            },
            "summary": summarise(self.records.values(), self.settings),
            "records": [r.to_dict() for r in self.records.values()],
        }
        temporary = self.path.with_suffix(".json.part")
        temporary.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        temporary.replace(self.path)


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "cpu_model": model or platform.processor(),
        "python": platform.python_version(),
    }


# -- running -----------------------------------------------------------------------------------
def run_all(
    settings: Settings, ledger: Ledger, runner: Runner = run_job, say: Callable[[str], None] = print
) -> None:
    children = Children()
    unfaulted = [
        Job(t, None, "", s) for t in settings.tools if t != "schemathesis" for s in settings.seeds
    ]
    try:
        _run_batch(unfaulted, settings, ledger, runner, children, None, say)
        ledger.budget_s = settings.budget_s or _median_wall(ledger, "default", settings.seeds)
        known: frozenset[str] | None = None
        if "schemathesis" in settings.tools:
            if ledger.budget_s is None:
                raise CompareError("schemathesis needs a time budget: run 'default' or --budget")
            baseline = [Job("schemathesis", None, "", s, ledger.budget_s) for s in settings.seeds]
            _run_batch(baseline, settings, ledger, runner, children, None, say)
            known = frozenset(
                f
                for s in settings.seeds
                if (r := ledger.records.get(Job("schemathesis", None, "", s).key)) is not None
                for f in r.failures
            )
        ours = [
            Job(tool, name, category, settings.seeds[0])
            for name, category in settings.faults
            for tool in settings.tools
            if tool != "schemathesis"
        ]
        _run_batch(ours, settings, ledger, runner, children, known, say)
        if "schemathesis" in settings.tools:
            theirs = [
                Job(
                    "schemathesis",
                    name,
                    category,
                    settings.seeds[0],
                    settings.budget_s or _fault_budget(ledger, name, settings.seeds[0]),
                )
                for name, category in settings.faults
            ]
            _run_batch(theirs, settings, ledger, runner, children, known, say)
    except KeyboardInterrupt:
        children.stop_all()
        raise


def _run_batch(
    jobs: Sequence[Job],
    settings: Settings,
    ledger: Ledger,
    runner: Runner,
    children: Children,
    known: frozenset[str] | None,
    say: Callable[[str], None],
) -> None:
    todo = [j for j in jobs if not (settings.resume and j.key in ledger.records)]
    if not todo:
        return

    def one(job: Job) -> None:
        record = runner(job, children, known)
        ledger.add(record)
        found = f"{len(record.failures)} failure(s)" if record.failures else "no failure"
        say(f"{job.tool:<12} {job.fault or '(unfaulted)':<48} seed {job.seed}: "
            f"{record.status}, {found}, {record.wall_s:.1f} s")  # fmt: skip

    with ThreadPoolExecutor(max_workers=settings.jobs) as pool:
        futures = [pool.submit(one, job) for job in todo]
        try:
            for future in futures:
                future.result()
        except KeyboardInterrupt:
            children.stop_all()
            for future in futures:
                future.cancel()
            raise


def _fault_budget(ledger: Ledger, fault: str, seed: int) -> float | None:
    """Schemathesis' time on a fault: what our default run took on it (stopping at its first
    failure, or running whole when it caught nothing); the unfaulted median when it has no
    result."""
    ours = ledger.records.get(Job("default", fault, "", seed).key)
    if ours is not None and ours.status == "ok":
        return round(ours.wall_s, 1)
    return ledger.budget_s


def _median_wall(ledger: Ledger, tool: str, seeds: Iterable[int]) -> float | None:
    walls = [
        r.wall_s
        for s in seeds
        if (r := ledger.records.get(Job(tool, None, "", s).key)) is not None and r.status == "ok"
    ]
    return round(statistics.median(walls), 1) if walls else None


# -- summary ---------------------------------------------------------------------------------
def summarise(records: Iterable[Record], settings: Settings) -> dict[str, Any]:
    records = list(records)
    summary: dict[str, Any] = {}
    totals = {c: sum(1 for _, cat in settings.faults if cat == c) for c in CATEGORIES}
    for tool in settings.tools:
        mine = [r for r in records if r.tool == tool]
        faulted = [r for r in mine if r.fault is not None]
        unfaulted = [r for r in mine if r.fault is None]
        caught = [r for r in faulted if r.status == "ok" and r.failures]
        per_category = {
            c: {"caught": sum(1 for r in caught if r.category == c), "total": totals[c]}
            for c in CATEGORIES
            if totals[c]
        }
        firsts = [r.first_failure_s for r in caught if r.first_failure_s is not None]
        walls = [r.wall_s for r in unfaulted if r.status == "ok"]
        summary[tool] = {
            "caught": len(caught),
            "faults": len(settings.faults),
            "runs_without_result": sum(1 for r in mine if r.status != "ok"),
            "per_category": per_category,
            "false_alarms_per_seed": {
                str(r.seed): len(r.failures) for r in sorted(unfaulted, key=lambda r: r.seed)
            },
            "median_wall_s": round(statistics.median(walls), 1) if walls else None,
            "median_first_failure_s": round(statistics.median(firsts), 1) if firsts else None,
        }
    return summary


def markdown(
    summary: dict[str, Any],
    settings: Settings,
    when: str,
    box: dict[str, Any],
    budget: float | None,
) -> str:
    tools = [t for t in settings.tools if t in summary]
    head = "| | " + " | ".join(f"`{TOOL_TITLES[t]}`" for t in tools) + " |"
    rule = "|---|" + "---:|" * len(tools)
    rows = [head, rule]

    def row(name: str, cell: Callable[[dict[str, Any]], str]) -> None:
        rows.append(f"| {name} | " + " | ".join(cell(summary[t]) for t in tools) + " |")

    row("faults caught (of the catalogue)", lambda s: f"**{s['caught']}** / {s['faults']}")
    for category in CATEGORIES:
        if any(category in summary[t]["per_category"] for t in tools):
            row(f"&nbsp;&nbsp;{category}", _category_cell(category))
    row(
        "false alarms, unfaulted server (per seed)",
        lambda s: " / ".join(str(v) for v in s["false_alarms_per_seed"].values()) or "n/a",
    )
    row("median wall time, whole run", lambda s: _seconds(s["median_wall_s"]))
    row("median time to first failure", lambda s: _seconds(s["median_first_failure_s"]))
    row("runs without a result", lambda s: str(s["runs_without_result"]))
    budget_text = f"{budget:.0f} s" if budget is not None else "n/a"
    notes = [
        f"Measured {when} on {box['cpus']} CPU(s) ({box['cpu_model']}), {box['platform']}, "
        f"Python {box['python']}; seeds {', '.join(map(str, settings.seeds))}; "
        f"{settings.jobs} run(s) at a time. Schemathesis ran {budget_text} on the unfaulted server "
        "(our default run's median) and, on each fault, the time our default run took on it.",
    ]
    return "\n".join(rows) + "\n\n" + "\n".join(notes) + "\n"


def _category_cell(category: str) -> Callable[[dict[str, Any]], str]:
    def cell(tool: dict[str, Any]) -> str:
        counts = tool["per_category"].get(category)
        return "n/a" if counts is None else f"{counts['caught']} / {counts['total']}"

    return cell


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} s"


def table(summary: dict[str, Any], settings: Settings) -> Table:
    view = Table(title="payment-conformance vs plain schemathesis (reference fault catalogue)")
    view.add_column("")
    tools = [t for t in settings.tools if t in summary]
    for tool in tools:
        view.add_column(TOOL_TITLES[tool], justify="right")
    view.add_row(
        "faults caught", *(f"{summary[t]['caught']}/{summary[t]['faults']}" for t in tools)
    )
    for category in CATEGORIES:
        if any(category in summary[t]["per_category"] for t in tools):
            view.add_row(
                f"  {category}",
                *("{caught}/{total}".format(**summary[t]["per_category"][category]) for t in tools),
            )
    view.add_row(
        "false alarms per seed",
        *(" / ".join(map(str, summary[t]["false_alarms_per_seed"].values())) for t in tools),
    )
    view.add_row("median wall", *(_seconds(summary[t]["median_wall_s"]) for t in tools))
    view.add_row(
        "median first failure", *(_seconds(summary[t]["median_first_failure_s"]) for t in tools)
    )
    view.add_row("runs without result", *(str(summary[t]["runs_without_result"]) for t in tools))
    return view


# -- command line ------------------------------------------------------------------------------
def parse(argv: Sequence[str] | None) -> Settings:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare")
    parser.add_argument(
        "--seeds", type=int, default=3, help="Unfaulted runs per tool (seeds 1..N)."
    )
    parser.add_argument("--jobs", type=int, default=2, help="Runs at a time.")
    parser.add_argument("--faults", default="", help="Comma-separated fault names.")
    parser.add_argument("--categories", default="", help="Comma-separated fault categories.")
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="Comma-separated: " + ", ".join(TOOLS)
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--budget", type=float, help="Schemathesis' seconds per run (default: "
                        "the median wall time of our default unfaulted runs).")  # fmt: skip
    parser.add_argument("--resume", action="store_true", help="Skip runs already recorded.")
    args = parser.parse_args(argv)  # argparse itself says what is wrong, exit 2
    if args.seeds < 1:
        raise CompareError(f"--seeds must be at least 1, not {args.seeds}")
    if args.jobs < 1:
        raise CompareError(f"--jobs must be at least 1, not {args.jobs}")
    if args.budget is not None and args.budget <= 0:
        raise CompareError(f"--budget must be positive, not {args.budget:g}")
    tools = tuple(t for t in args.tools.split(",") if t)
    unknown = [t for t in tools if t not in TOOLS]
    if unknown or not tools:
        raise CompareError(f"--tools: choose from {', '.join(TOOLS)}, not {args.tools!r}")
    try:
        faults = select_faults(_split(args.categories), _split(args.faults), catalogue())
    except SelftestError as exc:
        raise CompareError(str(exc)) from None
    return Settings(
        seeds=tuple(range(1, args.seeds + 1)),
        jobs=args.jobs,
        tools=tools,
        faults=tuple((f.name, f.category) for f in faults),
        out=args.out,
        resume=args.resume,
        budget_s=args.budget,
    )


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None, runner: Runner = run_job) -> int:
    console = Console(width=None if sys.stdout.isatty() else 140)
    try:
        settings = parse(argv)
        ledger = Ledger(settings.out / "comparison.json", settings, machine())
        if settings.resume:
            ledger.load()
        console.print(
            f"comparing {', '.join(settings.tools)} over {len(settings.faults)} fault(s) and the "
            f"unfaulted server (seeds {', '.join(map(str, settings.seeds))}), "
            f"{settings.jobs} run(s) at a time"
        )
        run_all(
            settings,
            ledger,
            runner,
            lambda line: console.print(line, markup=False, highlight=False),
        )
    except CompareError as exc:
        console.print(f"error: {exc}", markup=False)
        return 2
    except KeyboardInterrupt:
        console.print("interrupted: the runs so far are in the raw results")
        return 130
    ledger.save()
    summary = summarise(ledger.records.values(), settings)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = markdown(summary, settings, when, ledger.machine, ledger.budget_s)
    (settings.out / "comparison.md").write_text(text, encoding="utf-8")
    console.print(table(summary, settings))
    console.print(f"raw results: {ledger.path}; table: {settings.out / 'comparison.md'}")
    return 1 if any(s["runs_without_result"] for s in summary.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
