"""The passive validator on traffic the suite did not write, over the reference fault catalogue.

    python -m benchmarks.validate_faults [--seeds 3] [--jobs 1] [--faults a,b]
        [--categories x,y] [--sample N] [--out reports/validate-faults] [--keep-recordings]

For each run it starts the reference server (unfaulted, or with one fault of the catalogue),
drives it with the scripted merchant integration of ``merchant_client`` (an independent
black-box client with its own HAR writer, none of the suite's checks), writes the HAR and
validates it with ``conformance.validator.recording_file.validate_file``. The unfaulted server
runs once per seed: each of its failures is a false alarm. Each fault runs once (seed 1); a
failure there catches it.

A fault not caught is classed by comparing its recording with the unfaulted ones: *visible*
when some answer differs from the unfaulted seed-1 recording in a place where the unfaulted
recordings all agree (status, a field's value, a list's length, a meaningful header; a time
compared as its offset from the session's start in 5-minute steps, a generated value such as an
id or a secret as the order in which the session first showed it), which is a validator gap;
*not visible* otherwise, with the likely reason (webhook deliveries are not in an API
recording, an effect that needs time to pass, or a path the client's flows do not take).

It writes ``<out>/validate-faults.json`` (every run) and ``<out>/validate-faults.md`` (the
table per category: caught / visible / total, and the misses). Exit 0 when the unfaulted
recordings raised no false alarm and every run gave a result, 1 otherwise, 2 on bad arguments,
130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.merchant_client import record_session
from conformance.engine.selftest import SelftestError, select_faults
from conformance.reference.faults import CATEGORIES, Fault, catalogue

SCHEMA = "payment-conformance/validate-faults/1"
DEFAULT_OUT = Path("reports/validate-faults")
TIME_STEP_S = 300  # times are compared as offsets from the session's start, in these steps
# A header whose value an answer's meaning depends on; the others (Date, lengths) are noise.
_HEADERS = ("content-type", "idempotent-replayed", "allow", "www-authenticate")
# Bodies whose values change with the webhook dispatcher's timing: only their shape counts.
_TIMED_PATHS = ("/v1/webhook-deliveries",)

_LABEL = "_exchange"  # which exchange it is, for the report; not compared
Fingerprint = list[dict[str, str]]
"""Per recorded exchange, what it shows: a JSON-pointer-like place -> a normalised value."""


@dataclass
class RunRecord:
    """One run: the server's fault (``None`` unfaulted), what the validator said of it."""

    fault: str | None
    category: str
    seed: int
    status: str = "ok"  # "ok", or "error" when the run gave no verdict
    error: str = ""
    exchanges: int = 0
    verdict: str = ""
    failures: list[str] = field(default_factory=list)  # requirement ids that failed
    on_target: list[str] = field(default_factory=list)  # failures the fault is said to break
    seconds: float = 0.0
    visible: str = ""  # the first difference from the unfaulted recording, if any
    not_visible_reason: str = ""
    fingerprint: Fingerprint = field(default_factory=list, repr=False)

    @property
    def caught(self) -> bool:
        return self.status == "ok" and bool(self.failures)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["fingerprint"]
        data["caught"] = self.caught
        return data


# -- one run ------------------------------------------------------------------------------------
def measure(fault: Fault | None, seed: int, keep: Path | None = None) -> RunRecord:
    """Record a session against the reference server (with ``fault``) and validate it."""
    from conformance.core.profile import load_profile
    from conformance.reference.server import ReferenceServer
    from conformance.validator.recording_file import validate_file

    record = RunRecord(fault.name if fault else None, fault.category if fault else "", seed)
    clock = time.perf_counter()
    profile = load_profile("default")
    try:
        with ReferenceServer(profile=profile, faults=(fault.name,) if fault else ()) as server:
            har = record_session(server.base_url, profile, seed)
        with tempfile.TemporaryDirectory() as scratch:
            name = f"{fault.name if fault else 'unfaulted'}-seed{seed}.har"
            path = (keep or Path(scratch)) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            har.write(path)
            result = validate_file(path, "default", format="har")
    except Exception as exc:  # a run that gives no verdict is reported, not fatal
        record.status, record.error = "error", f"{type(exc).__name__}: {exc}"[:500]
        record.seconds = round(time.perf_counter() - clock, 2)
        return record
    record.exchanges = len(har.entries)
    record.verdict = result.verdict_summary
    record.failures = sorted(r.requirement.id for r in result.requirements if r.failures)
    breaks = set(fault.breaks) if fault else set()
    record.on_target = [f for f in record.failures if f in breaks]
    record.fingerprint = fingerprint(har.entries)
    record.seconds = round(time.perf_counter() - clock, 2)
    return record


# -- what a recording shows ---------------------------------------------------------------------
def _epoch(text: str) -> float | None:
    if len(text) < 19 or text[4:5] != "-" or text[10:11] != "T":
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


@dataclass
class _Names:
    """What one session's answers name, made comparable across sessions: a time as its offset
    from the session's start (in 5-minute steps); a generated value (an id, a secret, a hash, a
    precise time) as the order in which the session first showed it, so ``v3`` in two sessions
    is "the third value first shown", and a value shown again reads the same as before."""

    start: float
    first_shown: dict[str, int] = field(default_factory=dict)

    def time(self, text: str, moment: float) -> str:
        step = f"t{round((moment - self.start) / TIME_STEP_S):+d}"
        return f"{step} {self.generated(text)}" if "." in text else step

    def generated(self, text: str) -> str:
        return f"v{self.first_shown.setdefault(text, len(self.first_shown))}"

    def string(self, text: str) -> str:
        if (moment := _epoch(text)) is not None:
            return self.time(text, moment)
        if _is_generated(text):
            return self.generated(text)
        return json.dumps(text)


def _is_generated(text: str) -> bool:
    """A value the server makes up (``pay_3ad7...``, ``whsec_...``, ``0x4922...``), not an
    amount, a status, a code or a message."""
    return (
        len(text) >= 16
        and " " not in text
        and any(c.isdigit() for c in text)
        and not _NUMBER.match(text)
    )


def _leaves(node: Any, place: str, names: _Names, timed: bool) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        yield place or "/", "{}"
        for key in sorted(node):
            yield from _leaves(node[key], f"{place}/{key}", names, timed)
    elif isinstance(node, list):
        yield place or "/", f"[{len(node)}]"
        for index, item in enumerate(node):
            yield from _leaves(item, f"{place}/{index}", names, timed)
    elif timed:
        yield place, type(node).__name__
    elif isinstance(node, str):
        yield place, names.string(node)
    elif isinstance(node, int) and not isinstance(node, bool) and 10**9 < node < 10**11:
        yield place, names.time(str(node), node)
    else:
        yield place, json.dumps(node)


def fingerprint(entries: Sequence[dict[str, Any]]) -> Fingerprint:
    """What each HAR entry's answer shows, with times made relative to the session's start."""
    start = _epoch(str(entries[0].get("startedDateTime", ""))) if entries else None
    names = _Names(start or 0.0)
    prints: Fingerprint = []
    for number, entry in enumerate(entries, start=1):
        request = entry.get("request") or {}
        response = entry.get("response") or {}
        url = str(request.get("url", ""))
        path = "/" + url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0]
        timed = any(path.startswith(p) for p in _TIMED_PATHS)
        shown: dict[str, str] = {
            _LABEL: f"entry {number} ({request.get('method', '?')} {path})",
            "status": str(response.get("status")),
        }
        for header in response.get("headers") or []:
            name = str(header.get("name", "")).lower()
            if name in _HEADERS:
                shown[f"header {name}"] = str(header.get("value", ""))
        text = (response.get("content") or {}).get("text")
        if text:
            try:
                body = json.loads(text)
            except ValueError:
                shown["body"] = f"not JSON, {len(text)} characters"
            else:
                shown.update(_leaves(body, "", names, timed))
        prints.append(shown)
    return prints


def volatile_places(prints: Sequence[Fingerprint]) -> set[tuple[int, str]]:
    """The (exchange, place) pairs whose value is not the same in every unfaulted recording."""
    changing: set[tuple[int, str]] = set()
    longest = max((len(p) for p in prints), default=0)
    for index in range(longest):
        shown = [p[index] if index < len(p) else {} for p in prints]
        for place in set().union(*shown) - {_LABEL}:
            if len({s.get(place) for s in shown}) > 1:
                changing.add((index, place))
    return changing


def first_difference(
    faulted: Fingerprint, reference: Fingerprint, volatile: set[tuple[int, str]]
) -> str:
    """Where ``faulted`` shows something the unfaulted recordings never vary on ("" if
    nowhere)."""
    for index in range(max(len(faulted), len(reference))):
        if index >= len(faulted) or index >= len(reference):
            return f"{len(faulted)} exchanges recorded instead of {len(reference)}"
        mine, theirs = faulted[index], reference[index]
        label = mine[_LABEL]
        # the status first: "status is 201 (unfaulted: 400)" says more than a body's field
        for place in sorted((set(mine) | set(theirs)) - {_LABEL}, key=lambda p: (p != "status", p)):
            if (index, place) in volatile or mine.get(place) == theirs.get(place):
                continue
            return (
                f"{label}: {place} is {mine.get(place, 'absent')} "
                f"(unfaulted: {theirs.get(place, 'absent')})"
            )
    return ""


_DELIVERY_WORDS = ("deliver", "dispatcher", "sender", "webhook-id", "webhook-timestamp",
                   "webhook signature", "webhook hmac", "webhook body")  # fmt: skip
_TIME_WORDS = ("expire", "expiry", "retention", "exactly at", "in the future")


def not_visible_reason(fault: Fault) -> str:
    """Why a fault may leave the recorded exchanges as the unfaulted server's are (a guess
    from what the catalogue says it breaks)."""
    text = fault.description.lower()
    if any(b.startswith("DLV-") for b in fault.breaks) or any(w in text for w in _DELIVERY_WORDS):
        return (
            "webhook deliveries: the server's own requests to the endpoint (their signature, "
            "timing, retries) are not in a recording of the API"
        )
    if any(word in text for word in _TIME_WORDS):
        return "depends on time passing (expiry, retention, an instant) beyond a session's seconds"
    return (
        "the client's flows did not take the faulty path: every answer matched the unfaulted "
        "recordings"
    )


def classify(records: list[RunRecord]) -> None:
    """Fill ``visible`` or ``not_visible_reason`` of each fault run that was not caught."""
    unfaulted = sorted((r for r in records if r.fault is None and r.status == "ok"),
                       key=lambda r: r.seed)  # fmt: skip
    if not unfaulted:
        return
    volatile = volatile_places([r.fingerprint for r in unfaulted])
    reference = unfaulted[0].fingerprint
    faults = {f.name: f for f in catalogue()}
    for record in records:
        if record.fault is None or record.status != "ok" or record.caught:
            continue
        record.visible = first_difference(record.fingerprint, reference, volatile)
        if not record.visible:
            record.not_visible_reason = not_visible_reason(faults[record.fault])


# -- the matrix ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    seeds: tuple[int, ...]
    jobs: int
    faults: tuple[Fault, ...]
    out: Path
    keep_recordings: bool = False


def _one(job: tuple[Fault | None, int, Path | None]) -> RunRecord:
    return measure(*job)


def run_matrix(settings: Settings, say: Callable[[str], None] = print) -> list[RunRecord]:
    keep = settings.out / "recordings" if settings.keep_recordings else None
    jobs: list[tuple[Fault | None, int, Path | None]] = [(None, s, keep) for s in settings.seeds]
    jobs += [(f, settings.seeds[0], keep) for f in settings.faults]
    records: list[RunRecord] = []

    def done(record: RunRecord) -> None:
        records.append(record)
        outcome = record.error or (
            f"caught ({', '.join(record.failures[:4])})" if record.failures else "no failure"
        )
        say(f"{record.fault or '(unfaulted)':<48} seed {record.seed}: {outcome}, "
            f"{record.exchanges} exchanges, {record.seconds:.1f} s")  # fmt: skip

    if settings.jobs == 1:
        for job in jobs:
            done(_one(job))
    else:
        with ProcessPoolExecutor(max_workers=settings.jobs) as pool:
            for record in pool.map(_one, jobs):
                done(record)
    classify(records)
    return records


def summarise(records: list[RunRecord]) -> dict[str, Any]:
    faulted = [r for r in records if r.fault is not None]
    per_category: dict[str, dict[str, int]] = {}
    for category in CATEGORIES:
        mine = [r for r in faulted if r.category == category]
        if mine:
            per_category[category] = {
                "caught": sum(r.caught for r in mine),
                "visible": sum(r.caught or bool(r.visible) for r in mine),
                "total": len(mine),
            }
    unfaulted = sorted((r for r in records if r.fault is None), key=lambda r: r.seed)
    return {
        "faults": len(faulted),
        "caught": sum(r.caught for r in faulted),
        "visible": sum(r.caught or bool(r.visible) for r in faulted),
        "runs_without_result": sum(r.status != "ok" for r in records),
        "per_category": per_category,
        "false_alarms_per_seed": {str(r.seed): r.failures for r in unfaulted},
        "exchanges_per_session": max((r.exchanges for r in unfaulted), default=0),
        "seconds": round(sum(r.seconds for r in records), 1),
    }


def markdown(summary: dict[str, Any], records: list[RunRecord], when: str) -> str:
    rows = ["| category | caught | visible | total |", "|---|---:|---:|---:|"]
    for category, counts in summary["per_category"].items():
        caught, visible, total = counts["caught"], counts["visible"], counts["total"]
        rows.append(f"| {category} | {caught} | {visible} | {total} |")
    rows.append(f"| **all** | **{summary['caught']}** | **{summary['visible']}** | "
                f"**{summary['faults']}** |")  # fmt: skip
    alarms = " / ".join(str(len(v)) for v in summary["false_alarms_per_seed"].values()) or "n/a"
    lines = [
        f"Measured {when}: {summary['faults']} fault(s), {summary['exchanges_per_session']} "
        f"exchanges per session, false alarms on the unfaulted server per seed: {alarms}.",
        "",
        *rows,
        "",
        "Missed, visible in the recording (validator gaps):",
        "",
    ]
    misses = [r for r in records if r.fault is not None and not r.caught]
    gaps = [f"- `{r.fault}` ({r.category}): {r.visible}" for r in misses if r.visible]
    lines += gaps or ["- none"]
    lines += ["", "Missed, not visible in the recording:", ""]
    lines += [
        f"- `{r.fault}` ({r.category}): {r.not_visible_reason}"
        for r in misses
        if r.not_visible_reason
    ] or ["- none"]
    errors = [r for r in records if r.status != "ok"]
    if errors:
        lines += ["", "Runs without a result:", ""]
        lines += [f"- `{r.fault or '(unfaulted)'}` seed {r.seed}: {r.error}" for r in errors]
    return "\n".join(lines) + "\n"


def write_reports(records: list[RunRecord], settings: Settings) -> tuple[Path, Path]:
    when = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    summary = summarise(records)
    settings.out.mkdir(parents=True, exist_ok=True)
    document = {
        "schema": SCHEMA,
        "date": when,
        "settings": {"seeds": list(settings.seeds), "jobs": settings.jobs},
        "summary": summary,
        "records": [r.to_dict() for r in records],
    }
    json_path = settings.out / "validate-faults.json"
    json_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    md_path = settings.out / "validate-faults.md"
    md_path.write_text(markdown(summary, records, when), encoding="utf-8")
    return json_path, md_path


# -- command line -------------------------------------------------------------------------------
def sample(faults: Sequence[Fault], size: int) -> list[Fault]:
    """``size`` faults spread evenly over ``faults`` (which come in category order)."""
    if size >= len(faults):
        return list(faults)
    return [faults[i * len(faults) // size] for i in range(size)]


def parse(argv: Sequence[str] | None) -> Settings:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.validate_faults")
    parser.add_argument("--seeds", type=int, default=3, help="Unfaulted runs (seeds 1..N).")
    parser.add_argument("--jobs", type=int, default=1, help="Runs at a time (processes).")
    parser.add_argument("--faults", default="", help="Comma-separated fault names.")
    parser.add_argument("--categories", default="", help="Comma-separated fault categories.")
    parser.add_argument("--sample", type=int, help="Only N faults, spread over the selection.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--keep-recordings", action="store_true", help="Keep the HAR files in <out>/recordings."
    )
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, not {args.seeds}")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    if args.sample is not None and args.sample < 0:
        parser.error(f"--sample must not be negative, not {args.sample}")
    try:
        faults = select_faults(_split(args.categories), _split(args.faults), catalogue())
    except SelftestError as exc:
        parser.error(str(exc))
    if args.sample is not None:
        faults = sample(faults, args.sample)
    return Settings(
        seeds=tuple(range(1, args.seeds + 1)),
        jobs=args.jobs,
        faults=tuple(faults),
        out=args.out,
        keep_recordings=args.keep_recordings,
    )


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse(argv)
    print(
        f"recording the merchant client against the unfaulted server ({len(settings.seeds)} "
        f"seed(s)) and {len(settings.faults)} fault(s), {settings.jobs} at a time"
    )
    clock = time.perf_counter()
    # The faulted servers log the tracebacks of the 500s they are built to give: not news here.
    logging.disable(logging.ERROR)
    try:
        records = run_matrix(settings)
    except KeyboardInterrupt:
        print("interrupted: no report written", file=sys.stderr)
        return 130
    finally:
        logging.disable(logging.NOTSET)
    json_path, md_path = write_reports(records, settings)
    summary = summarise(records)
    print()
    print(md_path.read_text(encoding="utf-8"))
    print(f"wall time {time.perf_counter() - clock:.0f} s; reports: {json_path}, {md_path}")
    alarms = any(summary["false_alarms_per_seed"].values())
    return 1 if alarms or summary["runs_without_result"] else 0


if __name__ == "__main__":
    sys.exit(main())
