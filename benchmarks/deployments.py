"""The deployments benchmark: the suite's verdict and cost against each deployment implementers
really have (HTTPS with a private CA, mutual TLS, a rate-limited sandbox, a gateway key, a base
path, a distant server), each stood in for by the reference server.

    python -m benchmarks.deployments [--quick] [--seed S] [--workers auto|N]
        [--mode NAME ...] [--report FILE] [--keep DIR]

For each mode of ``MODES`` (default: all of them, in order) it starts ``python -m conformance
serve --port 0`` with the mode's server options as a subprocess, runs ``python -m conformance
run`` against it as a subprocess with the mode's client options and environment, as a user
would, then stops the server. Every mode runs with the same seed (drawn and printed unless
given) against a fresh server, with throw-away certificates and a random gateway key made for
this benchmark. It prints a line per mode as it finishes and, at the end, a Markdown table (mode,
verdict, exit code, wall time, CPU seconds of the run and its test processes, requests sent,
429s received, seconds waited for them, summed over the test processes so it may exceed the wall
time, and workers) for a README or a closing note. ``--report FILE`` writes every row and the
machine (cores, Python, platform, date) as JSON; ``--keep DIR`` keeps each run's reports in
``DIR/<mode>/``. The gateway key is never printed or written.

Exit code: 0 when every mode met its expectation (CONFORMANT with no failed requirement and
exit 0, or for the modes that must be refused, exit 2 at preflight with the message expected),
1 otherwise, 2 on bad arguments. ``nox -s deployments`` runs every mode.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import queue
import random
import resource
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.flakes import exercised_text
from conformance.reference.certificates import CertFiles, issue

RUN_TIMEOUT_S = {True: 900.0, False: 2400.0}  # for a run that hangs, never a slow one
SERVER_START_S = 30.0  # the ceiling for the server's "listening" line
SERVER_STOP_S = 10.0  # after SIGTERM, before it is killed
LISTENING = "reference server listening on "
REFUSED = "refused at preflight"
REDACTED = "[redacted]"
GATEWAY_HEADER = "X-Gateway-Key"
# Inherited settings that would change what a mode tests: each mode says its own.
SCRUBBED_ENV = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PAYMENT_CONFORMANCE_API_KEY",
    "PAYMENT_CONFORMANCE_API_SECRET",
    "PAYMENT_CONFORMANCE_HEADERS",
)


@dataclass(frozen=True)
class Mode:
    """A deployment: the options of ``serve`` standing in for it, those of ``run`` (and its
    environment) that reach it, and what the run must give. Arguments may hold ``{ca}``,
    ``{server_cert}``, ``{server_key}``, ``{client_cert}``, ``{client_key}`` and ``{gateway}``
    (the gateway key's value)."""

    name: str
    server_args: tuple[str, ...] = ()
    client_args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    expect_exit: int = 0  # 0: CONFORMANT, no failed requirement; else refused at preflight
    expect_message: str = ""  # what the refusal's message must name

    @property
    def expected(self) -> str:
        if self.expect_exit == 0:
            return "CONFORMANT, 0 failed, exit 0"
        naming = f" naming {self.expect_message}" if self.expect_message else ""
        return f"exit {self.expect_exit}, {REFUSED}{naming}"


TLS = ("--tls-cert", "{server_cert}", "--tls-key", "{server_key}")
CACERT = ("--cacert", "{ca}")
GATEWAY_SERVER = ("--require-header", f"{GATEWAY_HEADER}: {{gateway}}")
GATEWAY_CLIENT = ("-H", f"{GATEWAY_HEADER}: {{gateway}}")

EVERYTHING = (
    *TLS,
    "--rate-limit",
    "25",
    *GATEWAY_SERVER,
    "--base-path",
    "/payments-api",
    "--latency-ms",
    "50",
)

MODES: tuple[Mode, ...] = (
    Mode("plain"),
    Mode("base-path-latency", ("--base-path", "/payments-api", "--latency-ms", "80")),
    Mode("rate-limit", ("--rate-limit", "25")),
    Mode("rate-limit-client", ("--rate-limit", "25"), ("--rate-limit", "20/s")),
    Mode("https-cacert", TLS, CACERT),
    Mode(
        "https-ssl-cert-file",
        TLS,
        env=(("SSL_CERT_FILE", "{ca}"), ("REQUESTS_CA_BUNDLE", "{ca}")),
    ),
    Mode("https-no-cacert", TLS, expect_exit=2, expect_message="--cacert"),
    Mode("https-insecure", TLS, ("--insecure",)),
    Mode(
        "mutual-tls",
        (*TLS, "--tls-client-ca", "{ca}"),
        (*CACERT, "--client-cert", "{client_cert}", "--client-key", "{client_key}"),
    ),
    Mode("gateway-header", GATEWAY_SERVER, GATEWAY_CLIENT),
    Mode("gateway-header-missing", GATEWAY_SERVER, expect_exit=2),
    Mode("everything", EVERYTHING, (*CACERT, *GATEWAY_CLIENT)),
    Mode("everything-client-limit", EVERYTHING, (*CACERT, *GATEWAY_CLIENT, "--rate-limit", "25/s")),
)
MODE_NAMES = tuple(mode.name for mode in MODES)


@dataclass(frozen=True)
class Settings:
    """What every mode of one benchmark shares."""

    seed: int
    quick: bool
    workers: str  # "auto" or a number, passed to run
    certs: CertFiles
    gateway_key: str = field(repr=False)  # a secret: never printed
    only: tuple[str, ...] = ()  # run --only, for the benchmark's own tests
    keep: Path | None = None

    def values(self) -> dict[str, str]:
        """The real values of the arguments' placeholders."""
        return {
            "ca": str(self.certs.ca),
            "server_cert": str(self.certs.server_cert),
            "server_key": str(self.certs.server_key),
            "client_cert": str(self.certs.client_cert),
            "client_key": str(self.certs.client_key),
            "gateway": self.gateway_key,
        }

    def shown_values(self) -> dict[str, str]:
        """The placeholders as printed: file names, the gateway key redacted."""
        values = {name: Path(path).name for name, path in self.values().items()}
        values["gateway"] = REDACTED
        return values

    def redact(self, text: str) -> str:
        return text.replace(self.gateway_key, REDACTED) if self.gateway_key else text


def fill(args: Sequence[str], values: dict[str, str]) -> list[str]:
    return [arg.format(**values) for arg in args]


def shown(args: Sequence[str], settings: Settings) -> str:
    return shlex.join(fill(args, settings.shown_values()))


@dataclass(frozen=True)
class Row:
    mode: str
    exit_code: int | None
    verdict: str  # CONFORMANT, NOT CONFORMANT, INCOMPLETE, refused at preflight, or ERROR
    wall_s: float  # of the run subprocess
    cpu_s: float | None = None  # user + system of the run subprocess and its test processes
    failed: list[str] = field(default_factory=list)
    exercised: str = ""  # "331 of 334"
    requests: int | None = None
    received_429: int | None = None
    waited_s: float | None = None  # waiting out 429s (and 503s with Retry-After)
    limiter_waited_s: float | None = None  # waiting for the client's --rate-limit
    workers: str = ""
    workers_auto: str = ""  # why auto picked that many ("" when not auto)
    message: str = ""  # the last line of stderr when there is no results.json


Runner = Callable[[Mode, Settings], Row]


def expectation_held(mode: Mode, row: Row) -> bool:
    if mode.expect_exit == 0:
        return row.exit_code == 0 and row.verdict == "CONFORMANT" and not row.failed
    return (
        row.exit_code == mode.expect_exit
        and row.verdict == REFUSED
        and mode.expect_message in row.message
    )


# -- one mode, for real -------------------------------------------------------------------------
class ServerError(Exception):
    pass


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
    env["PYTHONUNBUFFERED"] = "1"
    return env


@contextmanager
def serving(argv: Sequence[str]) -> Iterator[str]:
    """Start ``serve`` and yield its URL once it says it listens; SIGTERM (then kill) after."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_base_env(),
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:  # keeps reading so that the server never blocks on a full pipe
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + SERVER_START_S
        last = "no output"
        url = None
        while url is None:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise ServerError(f"not listening after {SERVER_START_S:.0f} s") from None
            if line is None:
                raise ServerError(f"exited with {proc.wait()}: {last}")
            if line.startswith(LISTENING):
                url = line[len(LISTENING) :].strip()
            elif line.strip():
                last = line.strip()
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(SERVER_STOP_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reader.join(5)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_mode(mode: Mode, settings: Settings) -> Row:
    values = settings.values()
    python = [sys.executable, "-m", "conformance"]
    with tempfile.TemporaryDirectory(prefix="payment-conformance-deployments-") as scratch:
        reports = Path(scratch) / "reports"
        try:
            with serving([*python, "serve", "--port", "0", *fill(mode.server_args, values)]) as url:
                row = _run(mode, settings, [*python, "run", "--base-url", url], reports)
        except ServerError as exc:
            row = Row(mode.name, None, "ERROR", 0.0, message=f"server: {exc}")
        if settings.keep is not None and reports.is_dir():
            keep = settings.keep / mode.name
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(reports, keep)
    return replace(row, message=settings.redact(row.message))


def _run(mode: Mode, settings: Settings, command: list[str], reports: Path) -> Row:
    values = settings.values()
    argv = [
        *command,
        "--no-progress",
        "--report-dir",
        str(reports),
        "--seed",
        str(settings.seed),
        "--workers",
        settings.workers,
    ]
    if settings.quick:
        argv.append("--quick")
    for only in settings.only:
        argv += ["--only", only]
    argv += fill(mode.client_args, values)
    env = {**_base_env(), **{name: value.format(**values) for name, value in mode.env}}
    cpu_before = _children_cpu_s()
    started = time.perf_counter()
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S[settings.quick],
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        wall = time.perf_counter() - started
        return Row(mode.name, None, "ERROR", wall, message=f"killed after {wall:.0f} s")
    wall = time.perf_counter() - started
    cpu = _children_cpu_s() - cpu_before
    try:
        data: dict[str, Any] = json.loads((reports / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        lines = done.stderr.strip().splitlines() or done.stdout.strip().splitlines()
        last = lines[-1].strip() if lines else "no output"
        verdict = REFUSED if "preflight failed" in done.stderr else "ERROR"
        return Row(mode.name, done.returncode, verdict, wall, cpu, message=last)
    return row_from_results(mode.name, done.returncode, wall, cpu, data)


def row_from_results(
    name: str, exit_code: int | None, wall_s: float, cpu_s: float | None, data: dict[str, Any]
) -> Row:
    """A row from a run's results.json (see reporting/json_report.py)."""
    failed = [
        str(r.get("id"))
        for r in data.get("requirements", [])
        if isinstance(r, dict) and r.get("outcome") == "failed"
    ]
    limits = data.get("rate_limits")
    limits = limits if isinstance(limits, dict) else {}
    options = data.get("options")
    options = options if isinstance(options, dict) else {}
    requests = data.get("requests_sent")
    return Row(
        name,
        exit_code,
        str(data.get("verdict", "ERROR")),
        wall_s,
        cpu_s,
        failed,
        exercised_text(data),
        requests if isinstance(requests, int) else None,
        _number(limits, "received_429", int),
        _number(limits, "waited_s", float),
        _number(limits, "limiter_waited_s", float),
        str(options.get("workers", "")),
        str(options.get("workers_auto", "")),
        str(data.get("incomplete_reason") or ""),
    )


def _number(data: dict[str, Any], key: str, kind: type[int] | type[float]) -> Any:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return kind(value)


# -- output ---------------------------------------------------------------------------------------
def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _waited(row: Row) -> str:
    if row.waited_s is None:
        return "-"
    text = f"{row.waited_s:.1f} s"
    if row.limiter_waited_s:
        text += f" (+{row.limiter_waited_s:.1f} s for --rate-limit)"
    return text


def _workers(row: Row) -> str:
    if not row.workers:
        return "-"
    return f"{row.workers} (auto: {row.workers_auto})" if row.workers_auto else row.workers


def _verdict(row: Row) -> str:
    return f"{row.verdict} ({', '.join(row.failed)})" if row.failed else row.verdict


def options(mode: Mode, settings: Settings) -> str:
    """A mode's options as printed (file names, the gateway key redacted)."""
    text = (
        f"serve {shown(mode.server_args, settings) or '(no options)'}; "
        f"run {shown(mode.client_args, settings) or '(no options)'}"
    )
    env = " ".join(f"{name}={value}" for name, value in fill_env(mode, settings))
    return f"{text} with {env}" if env else text


def line(mode: Mode, row: Row, held: bool, settings: Settings) -> str:
    exit_code = "-" if row.exit_code is None else str(row.exit_code)
    text = (
        f"{mode.name:<23} {_verdict(row):<20} exit {exit_code}"
        f"  exercised {row.exercised or '-'}  wall {_seconds(row.wall_s)}"
        f"  CPU {_seconds(row.cpu_s)}  requests {_count(row.requests)}"
        f"  429s {_count(row.received_429)}  waited {_waited(row)}  workers {_workers(row)}"
        f"  [{options(mode, settings)}]"
        f"  expectation {'held' if held else 'NOT MET: ' + mode.expected}"
    )
    if row.message:
        text += f"  ({row.message})"
    return settings.redact(text)


def fill_env(mode: Mode, settings: Settings) -> list[tuple[str, str]]:
    values = settings.shown_values()
    return [(name, value.format(**values)) for name, value in mode.env]


def table(rows: Sequence[Row]) -> str:
    header = ("mode", "verdict", "exit", "wall", "CPU", "requests", "429s", "waited", "workers")
    lines = [
        "| " + " | ".join(header[:-1]) + " | workers (auto) |",
        "| " + " | ".join("---" for _ in header) + " |",
    ]
    for row in rows:
        cells = (
            row.mode,
            _verdict(row),
            "-" if row.exit_code is None else str(row.exit_code),
            _seconds(row.wall_s),
            _seconds(row.cpu_s),
            _count(row.requests),
            _count(row.received_429),
            _waited(row),
            _workers(row),
        )
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


# -- the command ----------------------------------------------------------------------------------
def _workers_arg(value: str) -> str:
    if value == "auto":
        return value
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'auto' or a number, not {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return str(number)


def _seed_arg(value: str) -> int:
    try:
        seed = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number, not {value!r}") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {seed}")
    return seed


def main(argv: Sequence[str] | None = None, runner: Runner = run_mode) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.deployments")
    parser.add_argument("--quick", action="store_true", help="Quick runs.")
    parser.add_argument("--seed", type=_seed_arg, help="Seed of every run (default: drawn).")
    parser.add_argument(
        "--workers", type=_workers_arg, default="auto", help="run --workers (default auto)."
    )
    parser.add_argument(
        "--mode",
        action="append",
        choices=MODE_NAMES,
        metavar="NAME",
        help=f"Run only this mode (repeatable; default all): {', '.join(MODE_NAMES)}.",
    )
    parser.add_argument("--report", type=Path, help="Write every row and the machine as JSON.")
    parser.add_argument("--keep", type=Path, help="Keep each run's reports in DIR/<mode>/.")
    # run --only, passed through: the benchmark's own tests keep a real run short with it.
    parser.add_argument("--only", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)  # argparse says what is wrong and exits 2
    chosen = set(args.mode or MODE_NAMES)
    modes = [mode for mode in MODES if mode.name in chosen]
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    kind = "quick" if args.quick else "default"
    print(
        f"{len(modes)} deployment mode(s), {kind} runs, seed {seed}, workers {args.workers}",
        flush=True,
    )
    rows: list[Row] = []
    report_rows: list[dict[str, Any]] = []
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="payment-conformance-certs-") as certs_dir:
        settings = Settings(
            seed=seed,
            quick=args.quick,
            workers=args.workers,
            certs=issue(Path(certs_dir)),
            gateway_key=secrets.token_hex(16),
            only=tuple(args.only),
            keep=args.keep,
        )
        for mode in modes:
            row = runner(mode, settings)
            row = replace(row, message=settings.redact(row.message))
            held = expectation_held(mode, row)
            if not held:
                missed.append(mode.name)
            rows.append(row)
            report_rows.append(
                {
                    **asdict(row),
                    "options": options(mode, settings),
                    "expected": mode.expected,
                    "expectation_held": held,
                }
            )
            print(line(mode, row, held, settings), flush=True)
    print()
    print(settings.redact(table(rows)))
    print()
    print(
        f"{len(rows) - len(missed)} of {len(rows)} modes met their expectation"
        + (f"; not: {', '.join(missed)}" if missed else "")
    )
    if args.report is not None:
        report = {
            "machine": machine(),
            "seed": seed,
            "quick": args.quick,
            "workers": args.workers,
            "rows": report_rows,
        }
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(
            settings.redact(json.dumps(report, indent=2)) + "\n", encoding="utf-8"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
