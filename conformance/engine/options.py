"""What a run is asked to do (``RunOptions``), checked before it sends a request.

``RunError`` is how the engine says that a run cannot happen (bad options, preflight failure,
nothing selected): exit 2. The options are checked, and the report directory probed, before
the run starts, so a bad option costs no run; ``_recorded_options`` is what the reports say
the run was asked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from conformance.core.diff import RunOutcomes
from conformance.core.headers import Header
from conformance.core.profile import Profile
from conformance.core.shards import Shard, family_costs
from conformance.core.untrusted import mask_url_passwords, split_url
from conformance.core.waivers import WaiverFile
from conformance.suite.wire import tls


class RunError(Exception):
    """The run could not happen (bad options, preflight failure, nothing selected): exit 2."""


@dataclass(frozen=True)
class RunOptions:
    base_url: str | None = None
    profile: str = "default"
    seed: int | None = None  # None: a random seed, reported in the result
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    # the embedded server's faults, FAULT_SEPARATOR between them ("a,b"), as Target.fault holds
    embedded_fault: str | None = None
    embedded_latency_ms: int = 0  # the embedded server answers each request this much later
    embedded_rate_limit: float | None = None  # and 429s past this many requests/s per API key
    embedded_escape_reading: str | None = None  # "refuse" or "literal": a malformed escape
    quick: bool = False
    max_examples: int | None = None
    report_dir: Path | None = None
    progress: bool = False
    workers: int = 1
    api_key: str | None = field(default=None, repr=False)
    api_secret: str | None = field(default=None, repr=False)
    preflight: bool = True
    webhook_url: str | None = None  # how the server reaches the suite's webhook receiver
    webhook_bind: str | None = None  # HOST:PORT the webhook receiver listens on
    max_duration_s: float | None = None  # the run's wall-clock budget (None: none)
    sign_key: Path | None = None  # Ed25519 private key (PEM) signing the manifest
    record: Path | None = None  # run --record: the run's traffic as a HAR file
    fail_fast: bool = False  # stop at the first failed requirement (pytest --maxfail=1)
    cacert: Path | None = None  # run --cacert: the CA bundle (PEM) to trust
    insecure: bool = False  # run --insecure: the server's certificate is not verified
    client_cert: Path | None = None  # run --client-cert/--client-key: mutual TLS
    client_key: Path | None = None
    headers: tuple[Header, ...] = field(default=(), repr=False)  # run -H: secrets
    rate_limit: float | None = None  # run --rate-limit: requests a second, all processes together
    proxy: str | None = field(default=None, repr=False)  # run --proxy: its password is a secret
    waivers: WaiverFile | None = None  # run --waivers, loaded (and checked) before the run
    strict_waivers: bool = False  # run --strict-waivers: a stale waiver fails the run
    baseline: RunOutcomes | None = None  # run --baseline: only failures new since it fail the run
    shard: Shard | None = None  # run --shard i/N: only this part of the run's tests (core.shards)
    families: tuple[str, ...] = ()  # only these check families' tests (the families' proofs)

    # --workers auto: ``workers`` is replaced after preflight by what suits the cores and the
    # round trip it measured (``engine.workers``); ``auto_why`` says why, for the reports
    auto_workers: bool = False
    auto_why: str | None = None

    @property
    def tls_settings(self) -> tls.TlsSettings:
        return tls.TlsSettings(self.cacert, self.insecure, self.client_cert, self.client_key)


def _check_options(options: RunOptions) -> None:
    if options.embedded_fault is not None and options.base_url is not None:
        raise RunError(
            "--fault switches on a fault of the embedded reference server; "
            "it cannot be combined with --base-url"
        )
    if options.embedded_rate_limit is not None and options.base_url is not None:
        raise RunError(
            "--server-rate-limit rate-limits the embedded reference server; "
            "it cannot be combined with --base-url"
        )
    if options.embedded_escape_reading is not None and options.base_url is not None:
        raise RunError(
            "--server-escape-reading chooses how the embedded reference server reads a "
            "malformed percent-escape; it cannot be combined with --base-url"
        )
    if options.base_url is not None and not options.base_url.startswith(("http://", "https://")):
        raise RunError(f"--base-url must start with http:// or https://, not {options.base_url!r}")
    if options.base_url is not None:
        _check_url("--base-url", options.base_url)
    if options.workers < 1:
        raise RunError(f"--workers must be at least 1, not {options.workers}")
    if options.max_examples is not None and options.max_examples < 1:
        raise RunError(f"--max-examples must be at least 1, not {options.max_examples}")
    if options.seed is not None and options.seed < 0:
        raise RunError(f"--seed must not be negative, not {options.seed}")
    if options.max_duration_s is not None and not options.max_duration_s > 0:
        raise RunError(f"--max-duration must be positive, not {options.max_duration_s:g}")
    if options.rate_limit is not None and not 0 < options.rate_limit < float("inf"):
        raise RunError(f"--rate-limit must be a positive number, not {options.rate_limit:g}")
    unknown = sorted(set(options.families) - set(family_costs()))
    if unknown:
        raise RunError(
            f"no check family {', '.join(unknown)}; the families are "
            f"{', '.join(sorted(family_costs()))}"
        )
    _check_webhook_options(options)


def _check_url(option: str, url: str) -> None:
    """``RunError`` when ``url`` cannot be parsed (a bracket that does not close, a bad port)."""
    try:
        split_url(url).port  # noqa: B018 (reading the port checks it)
    except ValueError as exc:
        raise RunError(f"{option} {mask_url_passwords(url)!r} is not a valid URL ({exc})") from None


def check_report_dir(directory: Path) -> None:
    """Raise ``RunError`` when the reports could not be written to ``directory``.

    Checked before the run, so a bad ``--report-dir`` costs no run (and sends no request);
    the directory and a file in it are really created, then removed (``writable``).
    """
    where = f"cannot write the reports to {directory}"
    if directory.exists():
        if not directory.is_dir():
            raise RunError(f"{where}: it is a file, not a directory")
        if not os.access(directory, os.W_OK | os.X_OK):
            raise RunError(f"{where}: the directory is not writable")
        _refuse_planted_links(directory, where)
        _probe_report_dir(directory, where)
        return
    ancestor = next((p for p in directory.absolute().parents if p.exists()), Path("/"))
    if not ancestor.is_dir():
        raise RunError(f"{where}: it cannot be created, {ancestor} is a file")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise RunError(f"{where}: it cannot be created, {ancestor} is not writable")
    _probe_report_dir(directory, where)


def _refuse_planted_links(directory: Path, where: str) -> None:
    from conformance.reporting import planted_links

    if (refusal := planted_links(directory)) is not None:
        raise RunError(f"{where}: {refusal}")


def _probe_report_dir(directory: Path, where: str) -> None:
    from conformance.engine.writable import probe_directory

    try:
        probe_directory(directory)
    except OSError as exc:
        other = exc.filename and Path(exc.filename) != directory.absolute()
        failed = f" (at {exc.filename})" if other else ""
        raise RunError(f"{where}: {exc.strerror or exc}{failed}") from None


def _check_webhook_options(options: RunOptions) -> None:
    from conformance.suite.webhooks.receiver import (
        ReceiverOptionError,
        check_public_url,
        parse_bind,
    )

    try:
        if options.webhook_url is not None:
            check_public_url(options.webhook_url)
        if options.webhook_bind is not None:
            parse_bind(options.webhook_bind)
    except ReceiverOptionError as exc:
        raise RunError(str(exc)) from None


def _recorded_options(options: RunOptions, profile: Profile) -> dict[str, str]:
    recorded = {
        "profile": options.profile,
        "quick": str(options.quick).lower(),
        "workers": str(options.workers),
    }
    if options.base_url:
        recorded["base_url"] = mask_url_passwords(options.base_url)
    if options.embedded_fault:
        recorded["fault"] = options.embedded_fault
    if options.embedded_latency_ms:
        recorded["latency_ms"] = str(options.embedded_latency_ms)
    if options.embedded_rate_limit is not None:
        recorded["server_rate_limit"] = f"{options.embedded_rate_limit:g}"
    if options.embedded_escape_reading is not None:
        recorded["escape_reading"] = options.embedded_escape_reading
    if options.only:
        recorded["only"] = ",".join(options.only)
    if options.skip:
        recorded["skip"] = ",".join(options.skip)
    if options.max_examples is not None:
        recorded["max_examples"] = str(options.max_examples)
    if options.webhook_url is not None:
        recorded["webhook_url"] = options.webhook_url
    if options.webhook_bind is not None:
        recorded["webhook_bind"] = options.webhook_bind
    if options.api_key is not None:
        recorded["api_key"] = options.api_key
    if options.max_duration_s is not None:
        recorded["max_duration_s"] = f"{options.max_duration_s:g}"
    if options.fail_fast:
        recorded["fail_fast"] = "true"
    recorded.update(options.tls_settings.recorded)
    verifier = profile.webhook_verifier
    if verifier is not None:  # which code judged the webhook signatures
        recorded["webhook_verifier"] = verifier.recorded
    if options.headers:  # the names only: the values are secrets
        recorded["headers"] = ",".join(name for name, _ in options.headers)
    if options.auto_workers:
        recorded["workers_auto"] = options.auto_why or "auto"
    if options.rate_limit is not None:
        recorded["rate_limit"] = f"{options.rate_limit:g}/s"
    if options.proxy is not None:
        recorded["proxy"] = mask_url_passwords(options.proxy)
    if options.waivers is not None:
        recorded["waivers"] = options.waivers.path
    if options.strict_waivers:
        recorded["strict_waivers"] = "true"
    if options.baseline is not None:
        recorded["baseline"] = options.baseline.source
    if options.shard is not None:
        recorded["shard"] = str(options.shard)
    hook = profile.signer_hook
    if hook is not None:  # the code that signed every request, by name and content
        recorded["auth_signer"] = hook.name
        recorded["auth_signer_sha256"] = hook.sha256
    return recorded
