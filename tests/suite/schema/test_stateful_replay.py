"""The stateful phase replays from its seed: the same seed sends the same call sequences, on a
fresh server or on one that other checks have filled with their own data."""

from __future__ import annotations

from typing import Any

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.judge.schema_requirements import requirement_operations
from conformance.reference.server import ReferenceServer
from conformance.suite.schema.generation import generation_contract
from conformance.suite.schema.loading import load_schemas
from conformance.suite.schema.runner import PhaseSizes, SchemaPhaseRunner

PROFILE = load_profile()
SIZES = PhaseSizes(fuzzing_examples=10, coverage_limit=8, stateful_examples=5, stateful_steps=8)
# what other checks leave on the server before the stateful phase runs
OTHER_CHECKS = ("createPayment", "createSubscription", "putWebhookEndpoint", "listPayments")


def stateful_calls(seed: int, *, after_other_checks: bool) -> list[tuple[str, str, int]]:
    """(method, path template, status) of every call of one stateful phase on a new server."""
    sent: list[tuple[str, str, int]] = []
    with ReferenceServer(profile=PROFILE) as server:
        schemas = load_schemas(
            effective_contract(PROFILE),
            PROFILE,
            requirement_operations(),
            base_url=server.base_url,
            seed=seed,
            max_examples=SIZES.fuzzing_examples,
            stateful_steps=SIZES.stateful_steps,
        )
        runner = SchemaPhaseRunner(schemas, PROFILE, seed=seed, sizes=SIZES)
        try:
            if after_other_checks:
                for operation_id in OTHER_CHECKS:
                    runner.run_unit_phases(operation_id)
            validate = runner.validate

            def recording(case: Any, response: Any, kwargs: Any, recorder: Any) -> None:
                sent.append((case.method, case.path, response.status_code))
                validate(case, response, kwargs, recorder)

            runner.validate = recording  # type: ignore[method-assign]
            runner.run_stateful()
        finally:
            runner.close()
    return sent


def test_the_same_seed_sends_the_same_call_sequences_whatever_else_the_server_holds() -> None:
    fresh = stateful_calls(3, after_other_checks=False)
    assert len(fresh) >= 10
    assert stateful_calls(3, after_other_checks=True) == fresh


def test_no_link_of_the_stateful_phase_reads_an_item_of_a_list() -> None:
    document = generation_contract(effective_contract(PROFILE), PROFILE)
    expressions = [
        str(value)
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for response in operation.get("responses", {}).values()
        for link in (response.get("links") or {}).values()
        for value in (link.get("parameters") or {}).values()
    ]
    assert expressions  # the links from created resources stay
    assert not [e for e in expressions if "/0/" in e]
