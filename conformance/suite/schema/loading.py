"""Loading the effective contract into schemathesis: configuration, signing, case preparation.

Two schemas are built from one effective contract:

- ``contract``: the effective contract as is. Negative cases are generated from it, and its
  documented responses are what every check validates against.
- ``generation``: the generation contract (``generation``). Positive cases come from it,
  so that they are valid under the profile's business rules too; its responses are the same.

Every request is signed with the profile's signer by a ``requests`` auth hook, which sees the
final method, path, query and body bytes. schemathesis' own security parameters are switched off
(``with-security-parameters = false``): authentication is tested by the auth family.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import requests
import schemathesis
from schemathesis.specs.openapi.schemas import OpenApiSchema

from conformance.core.openapi import operations
from conformance.core.profile import Credential, Profile
from conformance.suite.schema import checks as schema_checks  # registers our checks
from conformance.suite.schema.generation import generation_contract, schema_rules
from conformance.suite.schema.resending import ResendingSession
from conformance.suite.schema.signed_requests import SignedRequests
from conformance.suite.wire import gateway
from conformance.suite.wire.client import ClientStats
from conformance.suite.wire.transport import Limits, bounded_session

IDEMPOTENCY_HEADER = "Idempotency-Key"
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 15.0
# Built-in checks that cannot be sound here: both remove or replace credentials, which our
# signing hook puts back on every request (the auth and isolation families test them instead).
DISABLED_BUILTIN_CHECKS = ("ignored_auth", "object_level_authorization")
# Built-in checks that hard-code one answer where the profile chooses (405 with an Allow header
# to an undocumented method): the runner's own ``undocumented_method`` asks judge.routing.
REPLACED_BUILTIN_CHECKS = ("unsupported_method", "allow_header_conformance")
OUR_CHECKS = schema_checks.OUR_CHECKS


def signed_session(
    profile: Profile,
    credential: Credential | None = None,
    limits: Limits | None = None,
    stats: ClientStats | None = None,
) -> requests.Session:
    """A session that signs every request and bounds every response (``transport.Limits``),
    and waits out rate limits as ``stats``' clients do (``resending``)."""
    credential = credential or profile.primary
    stats = stats if stats is not None else ClientStats()
    resending = ResendingSession(stats, (credential.api_secret,))
    session = bounded_session(resending, limits)
    session.auth = SignedRequests(profile.signer(credential))
    session.trust_env = False  # no proxy from the environment for a loopback server
    # schemathesis adds the session's headers to every case it sends (the case's own win, and
    # a gateway header is not in the contract)
    session.headers.update(gateway.active())
    return session


# -------------------------------------------------------------------------- statuses
def _profile_status(profile: Profile, key: str) -> int:
    section, name = key.split(".", 1)
    return profile.error(section, name).status


def _operations_of(requirements: dict[str, tuple[str, ...]], ids: list[str]) -> set[str]:
    found: set[str] = set()
    for rid in ids:
        if rid not in requirements:
            raise KeyError(f"schema/rules.yaml names requirement {rid}, unknown to the catalogue")
        found.update(requirements[rid])
    return found


def _statuses(
    profile: Profile,
    entries: list[dict[str, Any]],
    operation_id: str,
    requirements: dict[str, tuple[str, ...]],
) -> set[int]:
    statuses: set[int] = set()
    for entry in entries:
        if entry.get("operations") == "all" or operation_id in _operations_of(
            requirements, entry.get("operations_of", [])
        ):
            statuses.add(_profile_status(profile, entry["status"]))
    return statuses


@dataclass(frozen=True)
class ExpectedStatuses:
    """What a conformant server may answer, per kind of case, for one operation."""

    positive: tuple[int, ...]
    negative: tuple[int, ...]
    missing_header: tuple[int, ...]


def expected_statuses(
    profile: Profile, operation_id: str, requirements: dict[str, tuple[str, ...]]
) -> ExpectedStatuses:
    """``requirements`` maps requirement ids to their operations (the catalogue's)."""
    rules = schema_rules()["statuses"]
    positive = {profile.success_status(operation_id)} | _statuses(
        profile, rules["positive"], operation_id, requirements
    )
    return ExpectedStatuses(
        positive=tuple(sorted(positive)),
        negative=tuple(sorted(_statuses(profile, rules["negative"], operation_id, requirements))),
        missing_header=tuple(
            sorted(_statuses(profile, rules["missing_header"], operation_id, requirements))
        ),
    )


def operation_ids(contract: dict[str, Any]) -> list[str]:
    return [entry.operation_id for entry in operations(contract)]


# ---------------------------------------------------------------------------- config
def schemathesis_config(
    contract: dict[str, Any],
    profile: Profile,
    requirements: dict[str, tuple[str, ...]],
    *,
    base_url: str,
    seed: int,
    max_examples: int,
    stateful_steps: int,
    mode: str,
) -> schemathesis.Config:
    """The configuration of one schema: checks, expected statuses, generation ``mode``
    (``positive`` for the generation contract, ``negative`` for the contract)."""
    per_operation = []
    for operation_id in operation_ids(contract):
        expected = expected_statuses(profile, operation_id, requirements)
        per_operation.append(
            {
                "include-operation-id": operation_id,
                "checks": {
                    "positive_data_acceptance": {"expected-statuses": list(expected.positive)},
                    "negative_data_rejection": {"expected-statuses": list(expected.negative)},
                    "missing_required_header": {"expected-statuses": list(expected.missing_header)},
                },
            }
        )
    config = schemathesis.Config.from_dict(
        {
            "seed": seed,
            "base-url": base_url,
            "request-timeout": READ_TIMEOUT_S,
            "generation": {
                "mode": mode,
                "with-security-parameters": False,
                "database": "none",
                "max-examples": max_examples,
                "no-shrink": True,
            },
            "checks": {
                **{
                    name: {"enabled": False}
                    for name in DISABLED_BUILTIN_CHECKS + REPLACED_BUILTIN_CHECKS
                },
                **our_check_settings(profile),
            },
            "phases": {
                "stateful": {
                    "max-steps": stateful_steps,
                    "generation": {"mode": "positive"},
                    # Only the contract's own links: inferred ones guess at dependencies
                    # (a statement "creating" a payment id) and hide the real roots.
                    "inference": {"algorithms": []},
                }
            },
            "operations": per_operation,
        }
    )
    return config


def our_check_settings(profile: Profile) -> dict[str, Any]:
    """Settings of our class-based checks (``checks``), from the profile."""
    codes: dict[str, list[str]] = {}
    open_statuses: set[str] = set()
    for spec in profile.error_specs:
        status, code = str(spec.status), spec.code
        if code is None:
            open_statuses.add(status)
        else:
            codes.setdefault(status, [])
            if code not in codes[status]:
                codes[status].append(code)
    validation = profile.error("status", "validation")
    return {
        "ErrorCodeMatchesProfile": {
            "codes": codes,
            "open_statuses": sorted(open_statuses),
            "validation": (
                {"status": validation.status, "code": validation.code}
                if profile.status.field_message_details
                else {}
            ),
        },
        "ReplayHeaderOnlyOnReplays": {
            "header": profile.idempotency.replay_header,
            "key_header": IDEMPOTENCY_HEADER,
        },
    }


@dataclass(frozen=True)
class LoadedSchemas:
    contract: OpenApiSchema
    generation: OpenApiSchema
    raw_contract: dict[str, Any]


def load_schemas(
    contract: dict[str, Any],
    profile: Profile,
    requirements: dict[str, tuple[str, ...]],
    *,
    base_url: str,
    seed: int,
    max_examples: int,
    stateful_steps: int,
) -> LoadedSchemas:
    def config(mode: str) -> schemathesis.Config:
        return schemathesis_config(
            contract,
            profile,
            requirements,
            base_url=base_url,
            seed=seed,
            max_examples=max_examples,
            stateful_steps=stateful_steps,
            mode=mode,
        )

    generation = schemathesis.openapi.from_dict(
        generation_contract(contract, profile), config=config("positive")
    )
    _links_only(generation)
    return LoadedSchemas(
        contract=schemathesis.openapi.from_dict(copy.deepcopy(contract), config=config("negative")),
        generation=generation,
        raw_contract=contract,
    )


def _links_only(schema: OpenApiSchema) -> None:
    """Let the contract's links alone shape the stateful phase.

    schemathesis guesses resource dependencies from field names and drops from the entry points
    any operation that names a resource nothing creates (a createPayment with a split
    ``merchant_id``). Our generation contract draws those ids from the profile's fixtures, so
    such operations do succeed: with an empty guess every create with links is an entry point.
    """
    from schemathesis.specs.openapi.stateful.dependencies.models import DependencyGraph

    schema.analysis._dependency_graph = DependencyGraph(operations={}, resources={})
