"""The plugin's command-line options and what they ask for: ``SuiteSettings``, and the TLS,
gateway headers and proxy of the process (``_connection_blocks``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.core.profile import API_KEY_ENV, API_SECRET_ENV
from conformance.core.shards import Shard, ShardError, parse_shard
from conformance.suite.selection import split_values

DEFAULT_MAX_EXAMPLES = 20
QUICK_MAX_EXAMPLES = 3


@dataclass(frozen=True)
class SuiteSettings:
    """What the run was asked to do (``conformance_settings`` fixture)."""

    seed: int
    max_examples: int
    quick: bool
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    base_url: str | None = None
    embedded_fault: str | None = None
    embedded_url: str | None = None  # a reference server the engine started for this run
    webhook_url: str | None = None  # how the server reaches the suite's webhook receiver
    webhook_bind: str | None = None  # HOST:PORT the receiver listens on
    shard: Shard | None = None  # run --shard: run only this part of the collected tests
    families: tuple[str, ...] = ()  # only these check families' tests (none: every family)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("payment-conformance", "Payment Service conformance suite")
    group.addoption(
        "--base-url", help="Server under test; without it an embedded reference server runs."
    )
    group.addoption(
        "--profile", default="default", help="Profile name or .toml path (default: default)."
    )
    group.addoption("--api-key", help=f"Replaces the profile's first API key (env {API_KEY_ENV}).")
    group.addoption(
        "--api-secret", help=f"Replaces the profile's first API secret (env {API_SECRET_ENV})."
    )
    group.addoption("--conformance-seed", help="Seed for generated cases (default: random).")
    group.addoption("--max-examples", help="Generated examples per property.")
    group.addoption(
        "--only",
        action="append",
        default=[],
        help="Run only these requirement id prefixes or sections ('IDEM', 'spec 5'); repeatable.",
    )
    group.addoption(
        "--skip", action="append", default=[], help="Leave these requirements out; repeatable."
    )
    group.addoption(
        "--quick", action="store_true", default=False, help="A short run over every family."
    )
    group.addoption(
        "--embedded-fault", help="Switch on one reference-server fault (embedded server only)."
    )
    group.addoption("--embedded-url", help=argparse.SUPPRESS)
    group.addoption(
        "--conformance-shard",
        metavar="i/N",
        help="Run only part i of N of the collected checks (core.shards).",
    )
    group.addoption(
        "--conformance-family",
        action="append",
        default=[],
        metavar="NAME",
        help="Run only the checks of this family (repeatable; comma-separated).",
    )
    # where the shard's plan (core.shards.ShardPlan) is written, for the engine's reports
    group.addoption("--conformance-shard-plan", help=argparse.SUPPRESS)
    # ``run --max-duration``: the run's end (epoch seconds) and its budget (for the messages)
    group.addoption("--conformance-deadline", type=float, help=argparse.SUPPRESS)
    group.addoption("--conformance-budget", type=float, default=0.0, help=argparse.SUPPRESS)
    group.addoption(
        "--webhook-url",
        help="The url at which the server reaches the suite's webhook receiver "
        "(default: http://<bound address>).",
    )
    group.addoption(
        "--webhook-bind",
        metavar="HOST:PORT",
        help="Where the webhook receiver listens (default: 127.0.0.1, the port of "
        "--webhook-url or a free one).",
    )
    # ``run --record``: each process appends its exchanges to a part file there (suite.har)
    group.addoption("--record-dir", help=argparse.SUPPRESS)
    group.addoption(
        "--rate-limit",
        metavar="N/s",
        help="Send at most N requests a second, all test processes together (25/s or 25).",
    )
    # ``run --rate-limit``: the file the processes of the run share the next free send time in
    group.addoption("--conformance-rate-file", help=argparse.SUPPRESS)
    _add_tls_options(group)
    parser.addini(
        "conformance_suite_dirs",
        type="paths",
        default=[],
        help="Extra directories whose tests are conformance checks (local extensions).",
    )


def _add_tls_options(group: pytest.OptionGroup) -> None:
    from conformance.suite.wire.gateway import HEADERS_ENV

    group.addoption(
        "--cacert",
        metavar="PATH",
        help="Trust the CA certificates of this PEM bundle (default: $SSL_CERT_FILE or "
        "$SSL_CERT_DIR, else certifi's).",
    )
    group.addoption(
        "--insecure",
        action="store_true",
        default=False,
        help="Do not verify the server's TLS certificate (reports say so).",
    )
    group.addoption(
        "--client-cert",
        metavar="PATH",
        help=f"Client certificate (PEM) for mutual TLS. Gateway headers: env {HEADERS_ENV}.",
    )
    group.addoption(
        "--client-key", metavar="PATH", help="Its private key, when not in --client-cert's file."
    )


def _connection_blocks(config: pytest.Config) -> contextlib.ExitStack:
    """The TLS settings, gateway headers and proxy of this process, active until the stack
    closes."""
    from conformance.core import run_inputs
    from conformance.suite.wire import gateway, proxy, tls

    def path(name: str) -> Path | None:
        raw = config.getoption(name)
        return None if raw is None else Path(str(raw))

    settings = tls.TlsSettings(
        cacert=path("--cacert"),
        insecure=bool(config.getoption("--insecure")),
        client_cert=path("--client-cert"),
        client_key=path("--client-key"),
    )
    stack = contextlib.ExitStack()
    try:
        headers = gateway.from_env(os.environ.get(gateway.HEADERS_ENV))
        stack.enter_context(tls.using(settings))
        stack.enter_context(proxy.using(proxy.from_env()))
    except (tls.TlsError, run_inputs.HeaderError, run_inputs.ProxyError) as exc:
        stack.close()
        raise pytest.UsageError(str(exc)) from None
    stack.enter_context(gateway.using(headers))
    return stack


def _positive_int(config: pytest.Config, name: str) -> int | None:
    raw = config.getoption(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise pytest.UsageError(f"{name} must be an integer, not {raw!r}") from None
    if value < (0 if name == "--conformance-seed" else 1):
        raise pytest.UsageError(f"{name} must be positive, not {raw!r}")
    return value


def _settings(config: pytest.Config) -> SuiteSettings:
    worker_seed = getattr(config, "workerinput", {}).get("conformance_seed")
    seed = _positive_int(config, "--conformance-seed")
    if seed is None:
        seed = int(worker_seed) if worker_seed is not None else random.randrange(2**31)
    quick = bool(config.getoption("--quick"))
    max_examples = _positive_int(config, "--max-examples")
    if max_examples is None:
        max_examples = QUICK_MAX_EXAMPLES if quick else DEFAULT_MAX_EXAMPLES
    base_url = config.getoption("--base-url")
    fault = config.getoption("--embedded-fault")
    embedded_url = config.getoption("--embedded-url")
    if base_url is not None and fault is not None and embedded_url is None:
        raise pytest.UsageError(
            "--embedded-fault switches on a fault of the embedded reference server; "
            "it cannot be combined with --base-url"
        )
    if base_url is not None and not str(base_url).startswith(("http://", "https://")):
        raise pytest.UsageError(f"--base-url must start with http:// or https://, not {base_url!r}")
    return SuiteSettings(
        seed=seed,
        max_examples=max_examples,
        quick=quick,
        only=split_values(config.getoption("--only")),
        skip=split_values(config.getoption("--skip")),
        base_url=str(base_url).rstrip("/") if base_url else None,
        embedded_fault=fault,
        embedded_url=embedded_url,
        webhook_url=_webhook_option(config, "--webhook-url"),
        webhook_bind=_webhook_option(config, "--webhook-bind"),
        shard=_shard_option(config),
        families=split_values(config.getoption("--conformance-family")),
    )


def _shard_option(config: pytest.Config) -> Shard | None:
    raw = config.getoption("--conformance-shard")
    if raw is None:
        return None
    try:
        return parse_shard(str(raw))
    except ShardError as exc:
        raise pytest.UsageError(str(exc)) from None


def _webhook_option(config: pytest.Config, name: str) -> str | None:
    from conformance.suite.webhooks.receiver import (
        ReceiverOptionError,
        check_public_url,
        parse_bind,
    )

    raw = config.getoption(name)
    if raw is None:
        return None
    try:
        if name == "--webhook-url":
            return check_public_url(str(raw))
        parse_bind(str(raw))
    except ReceiverOptionError as exc:
        raise pytest.UsageError(str(exc)) from None
    return str(raw)
