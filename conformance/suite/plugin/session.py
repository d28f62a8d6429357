"""The plugin's state for one pytest session: set up at configure, activated by the first
conformance module collected (the profile, the seed, Hypothesis bounded) and undone at
unconfigure."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.core.profile import (
    API_KEY_ENV,
    API_SECRET_ENV,
    Profile,
    ProfileError,
    load_profile,
    with_credential,
)
from conformance.core.redaction import run_secrets
from conformance.suite import rate_limit_checks, shard_data
from conformance.suite.plugin.options import SuiteSettings, _connection_blocks, _settings
from conformance.suite.wire.client import ClientStats

HYPOTHESIS_PROFILE = "payment-conformance"


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


_STATE = pytest.StashKey[_SessionState]()
_RECORDER = pytest.StashKey[Any]()  # a har.PartRecorder under --record-dir
_CONNECTION = pytest.StashKey[contextlib.ExitStack]()  # TLS and gateway headers in force


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
        from conformance.suite.wire.har import PartRecorder, signature_verdict

        state = config.stash[_STATE]
        worker = getattr(config, "workerinput", {}).get("workerid", "pytest")
        config.stash[_RECORDER] = PartRecorder(
            Path(record_dir),
            str(worker),
            lambda: state.secrets,
            signatures=signature_verdict(lambda: state.profile),
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
