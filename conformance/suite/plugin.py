"""The pytest plugin of the conformance suite (entry point ``payment_conformance``).

It is loaded in every pytest run of an environment where payment-conformance is installed,
so it stays inert unless conformance checks are collected: its fixtures are lazy, and only
tests under the suite package (or a directory of the ``conformance_suite_dirs`` ini option)
are checked for markers, filtered by ``--only``/``--skip`` and recorded as CheckResults.

Options: ``--base-url`` (none: an embedded reference server), ``--profile``, ``--api-key`` /
``--api-secret``, ``--conformance-seed``, ``--max-examples``, ``--only`` / ``--skip``,
``--quick``, ``--embedded-fault``, ``--webhook-url`` / ``--webhook-bind`` (where the webhooks
family's receiver listens and how the server reaches it), ``--cacert`` / ``--insecure`` /
``--client-cert`` / ``--client-key`` (the TLS of every request, ``conformance.suite.wire.tls``),
``--rate-limit N/s`` (all test processes together), ``--conformance-shard i/N`` (one part of
the selected tests, ``conformance.core.shards``); gateway headers come from the
environment (``conformance.suite.wire.gateway.HEADERS_ENV``). Markers: ``requirement(*ids)``
(mandatory on suite tests) and ``family(name)``.

Only an answer of the server fails a requirement (``tool_errors.not_the_servers``). A check
that raised one of hypothesis' own errors (``Flaky``, "Inconsistent data generation",
``Unsatisfiable``, a health check) or whose request got no HTTP answer (a refused or reset
connection, a TLS handshake or DNS error, no byte of a response within the read timeout, a
connection closed before any response) is not exercised, with that reason; what it recorded
from the server's answers before (``CheckRecorder`` failures with their evidence) stays. A reply
that is not valid HTTP, a body cut at the size cap and a response still incomplete at its 30 s
deadline (a trickle) are the server's answers and may fail the requirements that cover them.
When the server is gone (three requests in a row of the suite's client timed out or could not
connect), no further check runs, and the engine ends the run incomplete (exit code 2). The
schema phases' own HTTP stack giving up while the suite's client still reaches the server
leaves its checks not exercised, not the run incomplete. A request the server kept rate
limiting past its bounds leaves what it cut short not exercised (``rate_limit_checks``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.core.evidence import check_to_dict
from conformance.core.profile import (
    API_KEY_ENV,
    API_SECRET_ENV,
    Profile,
    ProfileError,
    load_profile,
    with_credential,
)
from conformance.core.redaction import run_secrets
from conformance.core.results import (
    CheckResult,
    Evidence,
    Outcome,
    RateLimitCounts,
    Target,
    budget_reason,
)
from conformance.core.shards import (
    CollectedTest,
    Shard,
    ShardError,
    family_costs,
    parse_shard,
    plan_for,
)
from conformance.suite import rate_limit_checks, shard_data
from conformance.suite.tool_errors import SERVER_GONE, not_the_servers
from conformance.suite.wire.check_properties import (
    CHECK_PROPERTY,
    FAMILY_PROPERTY,
    RATE_LIMITS_PROPERTY,
    REQUESTS_PROPERTY,
    STATUSES_PROPERTY,
    CheckRecorder,
    clean_message,
)
from conformance.suite.wire.client import (
    ClientStats,
    SuiteClient,
    SuiteTransportError,
    gone_reason,
)

SUITE_DIR = Path(__file__).resolve().parent
DEFAULT_MAX_EXAMPLES = 20
QUICK_MAX_EXAMPLES = 3
HYPOTHESIS_PROFILE = "payment-conformance"
OPERATION_PARAM = "operation_id"
EMBEDDED_TARGET_FIXTURE = "embedded_reference_target"  # conformance.engine.embedded


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


@dataclass
class _SessionState:
    settings: SuiteSettings
    profile_arg: str
    api_key: str | None
    api_secret: str | None
    stats: ClientStats = field(default_factory=ClientStats)
    profile: Profile | None = None
    active: bool = False
    restore: Callable[[], None] | None = None
    statuses: Any = None  # the StatusTally on the wire tap, from the first suite test on
    outside: frozenset[str] | None = None  # ids --only/--skip leave out (``_outside_selection``)

    def load_profile(self) -> Profile:
        if self.profile is None:
            try:
                profile = load_profile(self.profile_arg)
            except ProfileError as exc:
                raise pytest.UsageError(f"--profile: {exc}") from None
            self.profile = with_credential(profile, self.api_key, self.api_secret)
        return self.profile

    @property
    def secrets(self) -> tuple[str, ...]:
        profile = self.profile
        if profile is None:
            return run_secrets()
        return (*(c.api_secret for c in profile.credentials), *run_secrets())


@dataclass
class _ItemState:
    requests_at_start: int
    exchanges_at_start: int
    budget_refusals_at_start: int = 0
    rate_limits_at_start: rate_limit_checks.Mark = field(default_factory=rate_limit_checks.Mark)
    operation_id: str | None = None
    recorder: CheckRecorder | None = None
    reports: dict[str, pytest.TestReport] = field(default_factory=dict)
    evidence: Evidence | None = None
    synthesized_failure: bool = False
    not_judged: dict[str, str] = field(default_factory=dict)  # phase -> why, not the server's


# Exception names that add nothing to a failure message in a report.
_QUIET_EXCEPTION_PREFIXES = (
    "AssertionError: ",
    "Failed: ",
    f"{SuiteTransportError.__module__}.{SuiteTransportError.__name__}: ",
)

_STATE = pytest.StashKey[_SessionState]()
_ITEM = pytest.StashKey[_ItemState]()
_IN_SUITE = pytest.StashKey[dict[Path, bool]]()
_UNMARKED = pytest.StashKey[bool]()
_RECORDER = pytest.StashKey[Any]()  # a har.PartRecorder under --record-dir
_CONNECTION = pytest.StashKey[contextlib.ExitStack]()  # TLS and gateway headers in force
UNMARKED_MESSAGE = (
    "conformance checks must name the requirements they verify with "
    "@pytest.mark.requirement('ID', ...)"
)


# -- options ---------------------------------------------------------------------------------
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
    except (tls.TlsError, gateway.HeaderError, proxy.ProxyError) as exc:
        stack.close()
        raise pytest.UsageError(str(exc)) from None
    stack.enter_context(gateway.using(headers))
    return stack


def _split(values: list[str]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


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
        only=_split(config.getoption("--only")),
        skip=_split(config.getoption("--skip")),
        base_url=str(base_url).rstrip("/") if base_url else None,
        embedded_fault=fault,
        embedded_url=embedded_url,
        webhook_url=_webhook_option(config, "--webhook-url"),
        webhook_bind=_webhook_option(config, "--webhook-bind"),
        shard=_shard_option(config),
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "requirement(*ids): the requirement ids a conformance check verifies"
    )
    config.addinivalue_line("markers", "family(name): the check family (auth, idempotency, ...)")
    api_key = config.getoption("--api-key") or os.environ.get(API_KEY_ENV) or None
    api_secret = config.getoption("--api-secret") or os.environ.get(API_SECRET_ENV) or None
    config.stash[_STATE] = _SessionState(
        settings=_settings(config),
        profile_arg=str(config.getoption("--profile")),
        api_key=api_key,
        api_secret=api_secret,
    )
    config.stash[_CONNECTION] = _connection_blocks(config)
    shard = config.stash[_STATE].settings.shard
    if shard is not None:
        shard_data.set_shard(shard.index, shard.total)
    stats = config.stash[_STATE].stats
    stats.deadline = config.getoption("--conformance-deadline")
    stats.budget_s = config.getoption("--conformance-budget")
    rate_limit_checks.configure(config, stats)
    record_dir = config.getoption("--record-dir")
    if record_dir is not None:
        from conformance.suite.wire.har import PartRecorder

        state = config.stash[_STATE]
        worker = getattr(config, "workerinput", {}).get("workerid", "pytest")
        config.stash[_RECORDER] = PartRecorder(
            Path(record_dir), str(worker), lambda: state.secrets
        ).start()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: every worker generates with the controller's seed."""
    node.workerinput["conformance_seed"] = node.config.stash[_STATE].settings.seed
    rate_limit_checks.configure_node(node)


def pytest_unconfigure(config: pytest.Config) -> None:
    recorder = config.stash.get(_RECORDER, None)
    if recorder is not None:
        recorder.stop()
    rate_limit_checks.unconfigure(config)
    state = config.stash.get(_STATE, None)
    if state is not None and state.settings.shard is not None:
        shard_data.set_shard(0, 0)
    if state is not None and state.restore is not None:
        state.restore()
        state.restore = None
    connection = config.stash.get(_CONNECTION, None)
    if connection is not None:
        connection.close()
    if state is not None and state.statuses is not None:
        state.statuses.unsubscribe()


# -- which tests are conformance checks ------------------------------------------------------
def _suite_dirs(config: pytest.Config) -> list[Path]:
    extra: list[Path] = config.getini("conformance_suite_dirs")
    return [SUITE_DIR, *(Path(p).resolve() for p in extra)]


def _in_suite(config: pytest.Config, path: Path | None) -> bool:
    if path is None:
        return False
    known = config.stash.setdefault(_IN_SUITE, {})
    if path not in known:
        resolved = path.resolve()
        known[path] = any(resolved.is_relative_to(d) for d in _suite_dirs(config))
    return known[path]


def is_suite_item(item: pytest.Item) -> bool:
    return _in_suite(item.config, getattr(item, "path", None))


def _activate(config: pytest.Config, state: _SessionState) -> None:
    """First conformance module collected: check the profile, seed and bound Hypothesis."""
    if state.active:
        return
    state.active = True
    state.stats.rate_limiting.rule = state.load_profile().rate_limit
    from hypothesis import HealthCheck, core, settings

    previous_profile = settings.get_current_profile_name()
    previous_seed = core.global_force_seed
    settings.register_profile(
        HYPOTHESIS_PROFILE,
        max_examples=state.settings.max_examples,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
    settings.load_profile(HYPOTHESIS_PROFILE)
    core.global_force_seed = state.settings.seed  # type: ignore[assignment]
    release_constants = pin_local_constants()

    def restore() -> None:
        settings.load_profile(previous_profile)
        core.global_force_seed = previous_seed
        release_constants()

    state.restore = restore


def pin_local_constants() -> Callable[[], None]:
    """Keep the constants of the process's own modules out of Hypothesis' draws; returns the
    function that lets them back in.

    Hypothesis (6.131+) draws about one value in twenty from the literals of every module of
    the process that is not in site-packages or the standard library: the pool grows with each
    such module imported, before the session (a caller's code, a reference server, a benchmark)
    or during it (a lazy import). The same seed then generates other cases in another process
    history. Those literals say nothing about the server under test: the pool stays empty.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # a Hypothesis without local constants
        return lambda: None
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:
        return lambda: None
    empty = Constants()

    def pinned() -> Any:
        return empty

    # the permitted constants per draw kind are cached with the pool they came from
    cache.cache.clear()
    providers._get_local_constants = pinned

    def release() -> None:
        if providers._get_local_constants is pinned:
            providers._get_local_constants = original
        cache.cache.clear()

    return release


def pytest_collectstart(collector: pytest.Collector) -> None:
    state = collector.config.stash.get(_STATE, None)
    if state is not None and not state.active and _in_suite(collector.config, collector.path):
        _activate(collector.config, state)


def _marker_ids(item: pytest.Item) -> tuple[str, ...]:
    ids: list[str] = []
    for mark in item.iter_markers("requirement"):
        ids.extend(str(a) for a in mark.args)
    return tuple(dict.fromkeys(ids))


def _family(item: pytest.Item) -> str:
    mark = item.get_closest_marker("family")
    if mark is not None and mark.args:
        return str(mark.args[0])
    stem = Path(str(getattr(item, "path", item.nodeid))).stem
    return stem.removeprefix("test_") or "suite"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    suite_items = [item for item in items if is_suite_item(item)]
    if not suite_items:
        return
    _activate(config, state)
    unmarked = [item for item in suite_items if not _marker_ids(item)]
    if unmarked:
        if hasattr(config, "workerinput"):
            # A UsageError on a pytest-xdist worker is an internal error of the controller:
            # let each unmarked check fail with the explanation instead.
            for item in unmarked:
                item.stash[_UNMARKED] = True
        else:
            listed = "\n  ".join(item.nodeid for item in unmarked[:20])
            raise pytest.UsageError(f"{UNMARKED_MESSAGE}; these do not:\n  {listed}")
    if config.getoption("maxfail", 0) == 1:
        items[:] = fail_fast_order(items)
    settings = state.settings
    if settings.only or settings.skip:
        selected = selected_requirement_ids(settings.only, settings.skip)
        _deselect(config, items, lambda item: bool(selected.intersection(_marker_ids(item))))
    if settings.shard is not None:
        _keep_shard(config, items, settings.shard)


def _deselect(
    config: pytest.Config, items: list[pytest.Item], kept: Callable[[pytest.Item], bool]
) -> None:
    """Deselect the suite's items ``kept`` refuses (other items stay)."""
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if is_suite_item(item) and not kept(item):
            dropped.append(item)
        else:
            keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def _keep_shard(config: pytest.Config, items: list[pytest.Item], shard: Shard) -> None:
    """Keep ``shard``'s part of the suite's items; write its plan where the engine said."""
    tests = [CollectedTest(item.nodeid, _family(item)) for item in items if is_suite_item(item)]
    plan = plan_for(shard, tests, family_costs())
    mine = frozenset(plan.tests)
    _deselect(config, items, lambda item: item.nodeid in mine)
    where = config.getoption("--conformance-shard-plan")
    if where is not None:
        # every xdist worker collects the same items and writes the same plan
        path = Path(where)
        scratch = path.with_suffix(f".{os.getpid()}")
        scratch.write_text(json.dumps(plan.as_dict()), encoding="utf-8")
        os.replace(scratch, path)


# With --exitfirst (run --fail-fast) the families that check one exchange at a time, and catch
# the most bugs for their time, go first; the scenario families (state machines, a payment that
# waits to expire) last. Within a family the order is kept. Families not listed go in between.
FAIL_FAST_FAMILIES = (
    "auth",
    "idempotency",
    "boundaries",
    "robustness",
    "responses",
    "schema",
    "isolation",
    "x402",
    "webhooks",
    "statements",
    "schedules",
    "payments",
)


def fail_fast_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` in the order that reaches a first failure soonest (a stable sort)."""
    middle = FAIL_FAST_FAMILIES.index("schema")

    def rank(item: pytest.Item) -> int:
        if not is_suite_item(item):
            return -1
        family = _family(item)
        return FAIL_FAST_FAMILIES.index(family) if family in FAIL_FAST_FAMILIES else middle

    return sorted(items, key=rank)


def selected_requirement_ids(only: tuple[str, ...], skip: tuple[str, ...]) -> set[str]:
    """Ids of the catalogue's requirements selected by ``--only``/``--skip``."""
    from conformance.core.catalogue import load_catalogue

    try:
        selected = load_catalogue().select(only, skip)
    except ValueError as exc:
        raise pytest.UsageError(f"--only/--skip: {exc}") from None
    return {requirement.id for requirement in selected}


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    state = config.stash.get(_STATE, None)
    if state is None or not any("conformance.suite" in str(a) for a in config.args):
        return None
    s = state.settings
    target = s.base_url or "embedded reference server"
    return [
        f"payment-conformance {__version__} · profile {state.profile_arg} · seed {s.seed} "
        f"· target {target}" + (" (quick)" if s.quick else "")
    ]


# -- fixtures --------------------------------------------------------------------------------
def _state(request: pytest.FixtureRequest) -> _SessionState:
    return request.config.stash[_STATE]


@pytest.fixture(scope="session")
def conformance_settings(request: pytest.FixtureRequest) -> SuiteSettings:
    return _state(request).settings


@pytest.fixture(scope="session")
def conformance_seed(conformance_settings: SuiteSettings) -> int:
    return conformance_settings.seed


@pytest.fixture(scope="session")
def conformance_profile(request: pytest.FixtureRequest) -> Profile:
    return _state(request).load_profile()


@pytest.fixture(scope="session")
def conformance_target(
    request: pytest.FixtureRequest, conformance_settings: SuiteSettings
) -> Target:
    s = conformance_settings
    if s.embedded_url is not None:
        return Target(s.embedded_url, embedded=True, fault=s.embedded_fault)
    if s.base_url is not None:
        return Target(s.base_url, embedded=False)
    # Without a URL: the engine's plugin (conformance.engine.embedded) starts a reference server.
    try:
        target: Target = request.getfixturevalue(EMBEDDED_TARGET_FIXTURE)
    except pytest.FixtureLookupError:
        raise pytest.UsageError(
            "no --base-url given and the embedded reference server is not available "
            "(plugin payment_conformance_embedded not loaded): give --base-url"
        ) from None
    return target


@pytest.fixture(scope="session")
def suite_client(
    request: pytest.FixtureRequest, conformance_target: Target, conformance_profile: Profile
) -> Iterator[SuiteClient]:
    stats = _state(request).stats
    with SuiteClient(
        conformance_target.base_url, conformance_profile, conformance_profile.primary, stats=stats
    ) as client:
        yield client


@pytest.fixture(scope="session")
def other_client(
    request: pytest.FixtureRequest, conformance_target: Target, conformance_profile: Profile
) -> Iterator[SuiteClient]:
    stats = _state(request).stats
    with SuiteClient(
        conformance_target.base_url,
        conformance_profile,
        conformance_profile.secondary,
        stats=stats,
    ) as client:
        yield client


@pytest.fixture(scope="session")
def effective_contract(conformance_profile: Profile) -> dict[str, Any]:
    from conformance.core.contract import effective_contract as build

    return build(conformance_profile)


@pytest.fixture
def machine_context(
    request: pytest.FixtureRequest,
    suite_client: SuiteClient,
    other_client: SuiteClient,
    conformance_profile: Profile,
    effective_contract: dict[str, Any],
    conformance_settings: SuiteSettings,
    check_recorder: CheckRecorder,
) -> Iterator[Any]:
    """A ``stateful.MachineContext`` for one test: both merchants' clients and factories, and
    verdicts recorded under the test's family, with a transcript of every exchange."""
    from conformance.suite.factories import Factories
    from conformance.suite.stateful import MachineContext, Transcript, Verdicts

    transcript = Transcript(_state(request).secrets).attach(suite_client, other_client)
    ctx = MachineContext(
        client=suite_client,
        other_client=other_client,
        factories=Factories(suite_client, conformance_profile, effective_contract),
        other_factories=Factories(other_client, conformance_profile, effective_contract),
        profile=conformance_profile,
        contract=effective_contract,
        verdicts=Verdicts(check_recorder, check_recorder.family, transcript),
        quick=conformance_settings.quick,
    )
    try:
        yield ctx
    finally:
        transcript.detach(suite_client, other_client)


@pytest.fixture
def check_recorder(request: pytest.FixtureRequest) -> CheckRecorder:
    item = request.node
    item_state = _item_state(item)
    if item_state.recorder is None:
        item_state.recorder = CheckRecorder(
            _family(item), _state(request).secrets, item_state.operation_id
        )
    return item_state.recorder


@pytest.fixture
def record_operation(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """``record_operation("createPayment")``: the operation this test exercised."""
    item_state = _item_state(request.node)

    def record(operation_id: str) -> None:
        item_state.operation_id = operation_id
        if item_state.recorder is not None:
            item_state.recorder.operation_id = operation_id

    return record


# -- recording -------------------------------------------------------------------------------
def _item_state(item: pytest.Item) -> _ItemState:
    existing = item.stash.get(_ITEM, None)
    if existing is None:
        stats = item.config.stash[_STATE].stats
        existing = _ItemState(
            stats.requests_sent,
            stats.exchanges,
            stats.budget_refusals,
            rate_limit_checks.Mark.of(stats.rate_limiting),
        )
        item.stash[_ITEM] = existing
    return existing


def _parametrized_operation(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    value = callspec.params.get(OPERATION_PARAM)
    if isinstance(value, str):
        return value
    for value in callspec.params.values():
        operation = getattr(value, OPERATION_PARAM, None)
        if isinstance(operation, str):
            return operation
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if not is_suite_item(item):
        return
    if item.stash.get(_UNMARKED, False):
        pytest.fail(UNMARKED_MESSAGE, pytrace=False)
    _item_state(item).operation_id = _parametrized_operation(item)
    _count_statuses(item.config.stash[_STATE])
    stats = item.config.stash[_STATE].stats
    if stats.out_of_time:
        pytest.skip(budget_reason(stats.budget_s))
    if stats.server_gone:
        # Every further check would wait for its own timeouts: bound the run instead.
        pytest.skip(f"not run: {gone_reason(stats)}")


def _count_statuses(state: _SessionState) -> None:
    """Count the server's answers per operation and status from now on (``statuses``)."""
    if state.statuses is not None:
        return
    from conformance.suite.statuses import StatusTally

    state.statuses = StatusTally.of_profile(state.load_profile())
    state.statuses.subscribe()


def _is_timeout(exc: BaseException) -> bool:
    """A timeout of any HTTP stack (httpx, requests, sockets), by class name."""
    return any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def _report_message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        text = str(crash.message)
        for prefix in _QUIET_EXCEPTION_PREFIXES:
            text = text.removeprefix(prefix)
        return text
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not is_suite_item(item):
        return report
    item_state = _item_state(item)
    item_state.reports[report.when] = report
    state = item.config.stash[_STATE]
    if report.when == "call":
        _note_server_health(state.stats, call, report)
    if report.failed and call.excinfo is not None:
        reason = not_the_servers(call.excinfo.value)
        if reason is not None:
            item_state.not_judged[report.when] = reason
    if report.failed and item_state.evidence is None:
        item_state.evidence = _evidence_since(state.stats, item_state.exchanges_at_start)
    recorder = item_state.recorder
    failures = [] if recorder is None else _in_selection(state, recorder.failures)
    if report.when == "call" and report.passed and failures:
        report.outcome = "failed"
        lines = [f"{len(failures)} conformance check(s) failed:"]
        lines += [f"- {c.check_id} ({', '.join(c.requirement_ids)}): {c.message}" for c in failures]
        report.longrepr = "\n".join(lines)
        item_state.synthesized_failure = True
    if report.when == "teardown":
        properties = _final_properties(item, item_state, state)
        report.user_properties.extend(properties)
        item.user_properties.extend(properties)
    return report


def _in_selection(state: _SessionState, checks: list[CheckResult]) -> list[CheckResult]:
    """``checks`` but those naming only requirements ``--only``/``--skip`` leave out: the
    engine sets their results aside, and they must not fail the test (nor stop a --fail-fast
    run)."""
    settings = state.settings
    if not settings.only and not settings.skip:
        return checks
    if state.outside is None:
        from conformance.core.catalogue import load_catalogue

        every = {requirement.id for requirement in load_catalogue().requirements}
        state.outside = frozenset(every - selected_requirement_ids(settings.only, settings.skip))
    outside = state.outside
    return [c for c in checks if not (c.requirement_ids and outside.issuperset(c.requirement_ids))]


def _note_server_health(
    stats: ClientStats, call: pytest.CallInfo[None], report: pytest.TestReport
) -> None:
    """Count timeouts of HTTP stacks other than SuiteClient (which counts its own)."""
    excinfo = call.excinfo
    if excinfo is None:
        if report.passed:
            stats.consecutive_timeouts = stats.late_answers = 0
        return
    if not isinstance(excinfo.value, SuiteTransportError) and _is_timeout(excinfo.value):
        stats.consecutive_timeouts += 1


def _evidence_since(stats: ClientStats, exchanges_at_start: int) -> Evidence | None:
    if stats.exchanges <= exchanges_at_start or stats.last_client is None:
        return None
    return stats.last_client.last_exchange


def _test_outcome(item_state: _ItemState) -> tuple[Outcome, str]:
    setup = item_state.reports.get("setup")
    call = item_state.reports.get("call")
    teardown = item_state.reports.get("teardown")
    not_judged = item_state.not_judged
    if setup is not None and setup.failed and "setup" in not_judged:
        return Outcome.NOT_EXERCISED, not_judged["setup"]
    if setup is not None and setup.failed:
        return Outcome.FAILED, "error while preparing the check: " + _report_message(setup)
    if setup is not None and setup.skipped:
        return Outcome.NOT_EXERCISED, _report_message(setup)
    if call is not None and call.failed and "call" in not_judged:
        return Outcome.NOT_EXERCISED, not_judged["call"]
    if call is not None and call.failed:
        return Outcome.FAILED, _report_message(call)
    if call is not None and call.skipped:
        return Outcome.NOT_EXERCISED, _report_message(call)
    if teardown is not None and teardown.failed and "teardown" in not_judged:
        return Outcome.NOT_EXERCISED, not_judged["teardown"]
    if teardown is not None and teardown.failed:
        return Outcome.FAILED, "error while cleaning up: " + _report_message(teardown)
    return Outcome.PASSED, ""


def _spare_budget_cut(
    outcome: Outcome,
    message: str,
    recorded: list[CheckResult],
    item_state: _ItemState,
    state: _SessionState,
) -> tuple[Outcome, str, list[CheckResult]]:
    """The run's time budget ran out during this check and its clients refused to send: what
    that cut short is not exercised, not failed; a failure found before stays one."""
    reason = budget_reason(state.stats.budget_s)
    recorded = [
        replace(c, outcome=Outcome.NOT_EXERCISED, evidence=None, reason_not_exercised=reason)
        if c.outcome is Outcome.FAILED and reason in c.message
        else c
        for c in recorded
    ]
    if outcome is Outcome.FAILED and not item_state.synthesized_failure:
        return Outcome.NOT_EXERCISED, reason, recorded
    return outcome, message, recorded


def _check_id(item: pytest.Item) -> str:
    return item.nodeid.rsplit("/", 1)[-1]


def _final_properties(
    item: pytest.Item, item_state: _ItemState, state: _SessionState
) -> list[tuple[str, object]]:
    family = _family(item)
    outcome, message = _test_outcome(item_state)
    message = clean_message(message, state.secrets)
    recorded = item_state.recorder.checks if item_state.recorder is not None else []
    gone = state.stats.server_gone and SERVER_GONE not in message
    if outcome is Outcome.NOT_EXERCISED and item_state.not_judged and gone:
        message = f"{message}; {gone_reason(state.stats)}"
    if state.stats.budget_refusals > item_state.budget_refusals_at_start:
        outcome, message, recorded = _spare_budget_cut(
            outcome, message, recorded, item_state, state
        )
    rates = state.stats.rate_limiting
    if rates.counts.given_up > item_state.rate_limits_at_start.counts.given_up:
        outcome, message, recorded = rate_limit_checks.spare_rate_limited(
            outcome, message, recorded, synthesized=item_state.synthesized_failure
        )
    checks = list(recorded)
    real_failure = outcome is Outcome.FAILED and not item_state.synthesized_failure
    if not recorded or real_failure or outcome is Outcome.NOT_EXERCISED:
        call = item_state.reports.get("call")
        checks.append(
            CheckResult(
                check_id=_check_id(item),
                family=family,
                requirement_ids=_marker_ids(item),
                outcome=outcome,
                message=message,
                operation_id=item_state.operation_id,
                duration_s=round(call.duration if call is not None else 0.0, 6),
                evidence=item_state.evidence if outcome is Outcome.FAILED else None,
                reason_not_exercised=(message or "skipped")
                if outcome is Outcome.NOT_EXERCISED
                else None,
            )
        )
    checks += rate_limit_checks.answers_judged(
        rates, item_state.rate_limits_at_start, state.settings.only, state.settings.skip
    )
    properties: list[tuple[str, object]] = [(CHECK_PROPERTY, check_to_dict(c)) for c in checks]
    properties.append((REQUESTS_PROPERTY, state.stats.requests_sent - item_state.requests_at_start))
    waited = rates.counts - item_state.rate_limits_at_start.counts
    if waited != RateLimitCounts():
        properties.append((RATE_LIMITS_PROPERTY, waited.as_dict()))
    answers = state.statuses.take_property() if state.statuses is not None else {}
    if answers:
        properties.append((STATUSES_PROPERTY, answers))
    properties.append((FAMILY_PROPERTY, family))
    return properties
