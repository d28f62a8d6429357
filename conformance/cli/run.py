"""``run``: run the conformance suite against a server (or the embedded reference server).

Exit codes: 0 every exercised requirement passed; 1 at least one failed; 2 the run could not
happen, tested nothing or did not finish (bad options, preflight failure, nothing selected; the
time budget ran out, a test process crashed, Ctrl-C or SIGTERM: then the reports are written
with what ran and say why the run stopped).
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from conformance.cli import exit_codes
from conformance.cli._common import (
    SEED,
    escape_reading_option,
    fail,
    latency_option,
    profile_option,
    refuse_empty_selectors,
    server_rate_limit_option,
    split_selectors,
)
from conformance.cli._signals import sigterm_as_interrupt
from conformance.cli.shard_option import shard_note, shard_option
from conformance.cli.waivers import echo_waivers, gate_options, load_option
from conformance.core import run_inputs
from conformance.core.profile import API_KEY_ENV, API_SECRET_ENV
from conformance.core.results import FAULT_SEPARATOR, INSECURE_WARNING, Verdict
from conformance.core.shards import Shard
from conformance.core.untrusted import for_terminal
from conformance.engine.options import RunError, RunOptions
from conformance.engine.progress import ConsoleDisplay, render_summary
from conformance.engine.runner import Run, execute
from conformance.engine.target import default_workers
from conformance.engine.workers import MAX_AUTO_WORKERS
from conformance.reporting import step_summary
from conformance.reporting.load import LoadError
from conformance.reporting.outcomes import read_outcomes

# Two processes halve the default run on two cores (measured: 53 s -> 30 s); more cores help
# less, since the embedded server is a single process.
MAX_WORKERS = 64


class WorkersType(click.ParamType):  # type: ignore[type-arg]
    """``auto`` (the default: chosen for the server, see ``default_workers``) or 1 to 64."""

    name = "auto|N"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | None:
        if value is None or value == "auto":
            return None
        try:
            number = int(str(value))
        except ValueError:
            self.fail(f"{value!r} is neither 'auto' nor a number", param, ctx)
        if not 1 <= number <= MAX_WORKERS:
            self.fail(f"{number} is not in the range 1 to {MAX_WORKERS} (or 'auto')", param, ctx)
        return number


class RateType(click.ParamType):  # type: ignore[type-arg]
    """Requests a second: ``25/s`` or ``25`` (positive)."""

    name = "N/s"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            return run_inputs.parse_rate(str(value))
        except ValueError as exc:
            self.fail(str(exc).removeprefix("--rate-limit must be "), param, ctx)


class ProxyType(click.ParamType):  # type: ignore[type-arg]
    """An http:// or https:// proxy URL (``core.run_inputs.parse_proxy``)."""

    name = "URL"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        try:
            return run_inputs.parse_proxy(str(value))
        except run_inputs.ProxyError as exc:
            self.fail(str(exc).removeprefix("--proxy "), param, ctx)


# The whole run's wall-clock budget. A full run against the embedded server takes about a
# minute and a slow real server a few; half an hour leaves room for that while still ending a
# run against a server that answers every request just before each timeout.
DEFAULT_MAX_DURATION_S = 1800


def default_report_dir() -> Path:
    return Path("reports") / datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%SZ")


@click.command(epilog=exit_codes.RUN)
@click.option("--base-url", help="The server to test (default: the embedded reference server).")
@profile_option
@click.option(
    "--api-key",
    envvar=API_KEY_ENV,
    help=f"Replaces the API key of the profile's first credential; its secret stays the "
    f"profile's unless --api-secret is given too [env {API_KEY_ENV}].",
)
@click.option(
    "--api-secret",
    envvar=API_SECRET_ENV,
    help=f"Replaces the API secret of the profile's first credential; its key stays the "
    f"profile's unless --api-key is given too [env {API_SECRET_ENV}]; never printed.",
)
@click.option(
    "--seed",
    type=SEED,
    help="Seed of the generated cases (default: random; printed on every run).",
)
@click.option("--max-examples", type=click.IntRange(min=1), help="Generated examples per property.")
@click.option(
    "--only",
    callback=refuse_empty_selectors,
    multiple=True,
    metavar="ID|SECTION",
    help="Test only these requirement id prefixes or sections, e.g. IDEM, AUTH-003, 'spec 5'. "
    "Repeatable or comma-separated.",
)
@click.option(
    "--skip",
    callback=refuse_empty_selectors,
    multiple=True,
    metavar="ID|SECTION",
    help="Leave these requirements out (as --only).",
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the reports (default: reports/<UTC timestamp>/).",
)
@click.option(
    "--workers",
    type=WorkersType(),
    default="auto",
    show_default=True,
    help="Parallel test processes. auto: chosen after preflight from the cores and the round "
    f"trip it measured: one per core for a server that answers at once, more the farther it "
    f"is (they wait on the network, not the CPU), at most {MAX_AUTO_WORKERS}.",
)
@click.option("--quick", is_flag=True, help="A short run covering every operation and family.")
@click.option(
    "--fail-fast",
    is_flag=True,
    help="Stop at the first failed requirement (exit 1); the reports are still written and "
    "list what was not reached.",
)
@click.option(
    "--max-duration",
    "max_duration",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_MAX_DURATION_S,
    show_default=True,
    metavar="SECONDS",
    help="Wall-clock budget of the whole run. When it runs out no further check starts or "
    "request is sent, checks not run are reported not exercised, the reports are written "
    "and the exit code is 2.",
)
@click.option(
    "--fault",
    "faults",
    metavar="NAME",
    multiple=True,
    help="Switch on a reference-server fault (embedded server only; repeatable, as for serve; "
    "list: `faults`).",
)
@latency_option("The embedded server answers every request this much later, as a remote one would.")
@server_rate_limit_option(
    "The embedded server answers 429 with Retry-After past N requests a second per API key, "
    "as a rate-limited sandbox would (serve --rate-limit)."
)
@escape_reading_option(
    "--server-escape-reading",
    "The embedded server reads a % not followed by two hex digits as text (literal) or refuses "
    "it (refuse), where the profile allows either (serve --escape-reading).",
)
@click.option(
    "--webhook-url",
    metavar="URL",
    help="The url at which the server reaches the suite's webhook receiver (for a remote "
    "server; default: http://127.0.0.1:<port>).",
)
@click.option(
    "--webhook-bind",
    metavar="HOST:PORT",
    help="Where the webhook receiver listens (default: 127.0.0.1 on the port of --webhook-url, "
    "or a free port).",
)
@click.option(
    "--sign-key",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="KEY.pem",
    help="Sign the reports' manifest with this Ed25519 private key (PEM; make one with "
    "`keygen`); the signature goes to manifest.sig, checked by `verify`.",
)
@click.option(
    "--record",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE.har",
    help="Record the suite's own traffic (every request sent and its response, secrets "
    "masked) to this HAR 1.2 file, the input of `validate`. Bounded: each body cut at 2 MiB, "
    "bodies left out after 256 MiB, the file capped at 320 MiB; what was cut is marked "
    "(docs/recording.md).",
)
@click.option(
    "--cacert",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="Trust the CA certificates of this PEM bundle for the server's TLS certificate "
    "(default: $SSL_CERT_FILE / $SSL_CERT_DIR when set, else certifi's bundle).",
)
@click.option(
    "--insecure",
    is_flag=True,
    help="Do not verify the server's TLS certificate (the console and every report say so).",
)
@click.option(
    "--client-cert",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="Client certificate (PEM) for servers that want mutual TLS; may hold the key too.",
)
@click.option(
    "--client-key",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="The private key (PEM) of --client-cert, when its file does not hold it.",
)
@click.option(
    "-H",
    "--header",
    "headers",
    multiple=True,
    metavar="'NAME: VALUE'",
    help="Send this header on every request (a gateway's key, say; not the API's own "
    "authentication). Repeatable. Values are secrets: masked in output, reports and --record.",
)
@click.option(
    "--rate-limit",
    type=RateType(),
    help="Send at most N requests a second, all test processes together (25/s or 25), for a "
    "sandbox that publishes its limit. 429 answers are waited out with or without it.",
)
@click.option(
    "--proxy",
    type=ProxyType(),
    help="Send every request of the run through this http:// or https:// proxy (a password in "
    "it is masked in output and reports). HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY are "
    "never read.",
)
@gate_options()
@shard_option
@click.option("--no-progress", is_flag=True, help="No live progress display (plain lines only).")
def run(
    base_url: str | None,
    profile_name: str,
    api_key: str | None,
    api_secret: str | None,
    seed: int | None,
    max_examples: int | None,
    only: tuple[str, ...],
    skip: tuple[str, ...],
    report_dir: Path | None,
    workers: int | None,
    quick: bool,
    fail_fast: bool,
    max_duration: float,
    faults: tuple[str, ...],
    latency_ms: int,
    server_rate_limit: float | None,
    escape_reading: str | None,
    webhook_url: str | None,
    webhook_bind: str | None,
    sign_key: Path | None,
    record: Path | None,
    cacert: Path | None,
    insecure: bool,
    client_cert: Path | None,
    client_key: Path | None,
    headers: tuple[str, ...],
    rate_limit: float | None,
    proxy: str | None,
    waivers_file: Path | None,
    strict_waivers: bool,
    baseline: Path | None,
    shard: Shard | None,
    no_progress: bool,
) -> None:
    """Run the conformance suite and write the reports."""
    if faults and base_url is not None:
        fail(
            "--fault switches on a fault of the embedded reference server; "
            "it cannot be combined with --base-url"
        )
    if latency_ms and base_url is not None:
        fail(
            "--latency-ms slows the embedded reference server down; "
            "it cannot be combined with --base-url"
        )
    try:
        parsed_headers = run_inputs.parse_headers(headers)
    except run_inputs.HeaderError as exc:
        fail(for_terminal(str(exc)))
    for warning in run_inputs.short_value_warnings(parsed_headers):
        click.echo(f"warning: {for_terminal(warning)}", err=True)
    if shard is not None and (waivers_file is not None or strict_waivers or baseline is not None):
        # a shard sees only its part of the run: every waiver of another part would be stale
        fail(
            "--waivers, --strict-waivers and --baseline judge a whole run: with --shard, give "
            "them to 'payment-conformance merge' instead"
        )
    waivers = load_option(waivers_file, strict_waivers, fail_fast)  # a bad file costs no run
    try:
        baseline_outcomes = None if baseline is None else read_outcomes(baseline)
    except LoadError as exc:
        fail(for_terminal(f"--baseline: {exc}"))
    options = RunOptions(
        base_url=base_url,
        profile=profile_name,
        seed=seed,
        only=split_selectors(only),
        skip=split_selectors(skip),
        embedded_fault=FAULT_SEPARATOR.join(dict.fromkeys(faults)) or None,
        embedded_latency_ms=latency_ms,
        embedded_rate_limit=server_rate_limit,
        embedded_escape_reading=escape_reading,
        quick=quick,
        max_examples=max_examples,
        report_dir=report_dir if report_dir is not None else default_report_dir(),
        progress=not no_progress,
        workers=workers if workers is not None else default_workers(base_url, latency_ms),
        api_key=api_key or None,
        api_secret=api_secret or None,
        webhook_url=webhook_url,
        webhook_bind=webhook_bind,
        max_duration_s=max_duration,
        sign_key=sign_key,
        record=record,
        fail_fast=fail_fast,
        cacert=cacert,
        insecure=insecure,
        client_cert=client_cert,
        client_key=client_key,
        headers=parsed_headers,
        auto_workers=workers is None,
        rate_limit=rate_limit,
        proxy=proxy,
        waivers=waivers,
        strict_waivers=strict_waivers,
        baseline=baseline_outcomes,
        shard=shard,
    )
    console = Console(file=sys.stdout, highlight=False)
    if insecure:
        click.echo(f"warning: {INSECURE_WARNING}", err=True)
    try:
        with sigterm_as_interrupt():  # SIGTERM cleans up as Ctrl-C does
            finished = execute(options, ConsoleDisplay(console, live=not no_progress))
    except RunError as exc:
        fail(for_terminal(str(exc)))  # may quote the server: escaped, URL password masked
        return
    except KeyboardInterrupt:
        fail("interrupted")
        return
    result = finished.result
    render_summary(console, result, finished.report_paths)
    if result.shard is not None:
        click.echo(shard_note(result.shard))
    if finished.recording is not None:
        console.print(Text(for_terminal(finished.recording.describe())), soft_wrap=True)
    if result.waivers is not None:
        echo_waivers(result.waivers)
    problem = step_summary.append(finished.report_paths, os.environ)
    if problem is not None:
        click.echo(f"warning: {for_terminal(problem)}", err=True)
    if insecure:  # again beside the verdict it qualifies
        click.echo(f"warning: {INSECURE_WARNING}", err=True)
    if finished.report_error is not None:
        fail(for_terminal(finished.report_error))
    if result.incomplete_reason is not None:
        where = f"; the reports show what ran until then: {report_dir_of(finished)}"
        click.echo(
            f"error: the run did not finish: {for_terminal(result.incomplete_reason)}{where}",
            err=True,
        )
        raise SystemExit(result.exit_code)
    if result.verdict is Verdict.NOT_TESTED:
        click.echo(
            "error: nothing was tested: no selected requirement was exercised "
            "(see 'not exercised' in the reports for the reasons)",
            err=True,
        )
    strict_failure = result.waivers.strict_failure if result.waivers is not None else None
    if strict_failure is not None:
        click.echo(f"error: {for_terminal(strict_failure)}", err=True)
    raise SystemExit(result.exit_code)


def report_dir_of(finished: Run) -> str:
    return f"{finished.report_paths[0].parent}/" if finished.report_paths else "(none written)"
