"""The auth family under each built-in signing choice and per-kind auth errors.

For each choice a small ``extends = "default"`` profile is written: the reference server under
that profile passes every auth check, and a reference server that made the default choice
instead is refused at preflight (the suite signs as the profile says) or fails the checks of
the answers that differ (the checks read the profile's error of each kind).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome, RunResult
from conformance.engine.options import RunError, RunOptions
from conformance.engine.preflight import preflight
from conformance.engine.runner import run_suite
from conformance.reference.server import ReferenceServer
from tests.suite.proofs import family_failures, family_passed

pytestmark = pytest.mark.slow

SIGNING_CHOICES = {
    "sha512": 'scheme = "hmac-sha512-hex"',
    "base64": 'scheme = "hmac-sha256-base64"',
    "base64url": 'scheme = "hmac-sha256-base64url"',
    "unix-millis": 'timestamp_format = "unix-millis"',
    "rfc3339": 'timestamp_format = "rfc3339"',
    "body-sha256": 'string_to_sign = "{timestamp}\\n{nonce}\\n{method}\\n{target}\\n{body_sha256}"',
    "every-placeholder": (
        'string_to_sign = "{method} {path}?{query}@{host}/{api_key}\\n{timestamp}.{nonce}\\n'
        '{body_sha256_base64}\\n{body}"'
    ),
}
# Missing header or unknown key 401, every other failure 403.
FORBIDDEN = '{ status = 403, code = "forbidden" }'
PER_KIND_ERRORS = (
    "[auth.errors]\n"
    + "".join(
        f"{kind} = {FORBIDDEN}\n" for kind in ("malformed", "bad_signature", "expired", "replayed")
    )
    + 'missing = { status = 401, code = "unauthorized" }\n'
)
EVERY_AUTH_ID = {f"AUTH-{n:03d}" for n in range(1, 21)}


def profile_file(tmp_path: Path, name: str, auth: str) -> Path:
    path = tmp_path / f"{name}.toml"
    body = auth if auth.startswith("[auth") else f"[auth]\n{auth}\n"
    path.write_text(f'extends = "default"\n[profile]\nname = "{name}"\n{body}', encoding="utf-8")
    return path


def run(profile: Path, base_url: str | None = None) -> RunResult:
    options = RunOptions(
        base_url=base_url, profile=str(profile), seed=29, only=("AUTH",), quick=True, workers=1
    )
    return run_suite(options)


@pytest.fixture(scope="module")
def default_server() -> Iterator[str]:
    with ReferenceServer(profile=load_profile()) as server:
        yield server.base_url


@pytest.mark.parametrize("choice", sorted(SIGNING_CHOICES))
def test_a_server_that_made_the_choice_passes_every_auth_check(tmp_path: Path, choice: str) -> None:
    result = run(profile_file(tmp_path, choice, SIGNING_CHOICES[choice]))
    assert family_failures(result, "auth") == {}
    assert family_passed(result, "auth") >= EVERY_AUTH_ID


@pytest.mark.parametrize("choice", sorted(SIGNING_CHOICES))
def test_a_server_that_made_the_default_choice_is_refused_at_preflight(
    tmp_path: Path, choice: str, default_server: str
) -> None:
    with pytest.raises(RunError) as refused:
        run(profile_file(tmp_path, choice, SIGNING_CHOICES[choice]), default_server)
    message = str(refused.value)
    assert "the server rejected the signed request (401" in message
    assert "scheme, timestamp_format, string_to_sign" in message


def test_the_body_hash_template_signs_instead_of_crashing(tmp_path: Path) -> None:
    # issue 29: {body_sha256} passed profile check, then preflight raised KeyError
    profile = load_profile(profile_file(tmp_path, "hash", SIGNING_CHOICES["body-sha256"]))
    with ReferenceServer(profile=profile) as server:
        assert preflight(server.base_url, profile).ok


def test_per_kind_auth_errors_are_each_expected(tmp_path: Path, default_server: str) -> None:
    path = profile_file(tmp_path, "per-kind", PER_KIND_ERRORS)
    result = run(path)
    assert family_failures(result, "auth") == {}
    assert family_passed(result, "auth") >= EVERY_AUTH_ID
    # a server answering 401 to every failure fails exactly where the profile says 403
    failed = family_failures(run(path, default_server), "auth")
    assert {"AUTH-007", "AUTH-008", "AUTH-010", "AUTH-011", "AUTH-013", "AUTH-016"} <= set(failed)
    assert not {"AUTH-009", "AUTH-019", "AUTH-020"} & set(failed)
    assert any("answered 401" in m and "answer is 403" in m for m in failed["AUTH-013"])


def test_other_families_expect_the_auth_error_of_its_kind(
    tmp_path: Path, default_server: str
) -> None:
    """An unknown path without credentials (STATUS-019) and the test helpers called without
    or with a wrong signature (HELP-007) are answered with the missing or bad-signature error."""
    forbidden = "".join(
        f"{kind} = {FORBIDDEN}\n" for kind in ("missing", "malformed", "bad_signature")
    )
    path = profile_file(tmp_path, "forbidden", "[auth.errors]\n" + forbidden)

    def failed(base_url: str | None) -> set[str]:
        options = RunOptions(
            base_url=base_url,
            profile=str(path),
            seed=29,
            only=("STATUS-019", "HELP-007"),
            quick=True,
            workers=1,
        )
        result = run_suite(options)
        assert {r.requirement.id for r in result.requirements} == {"STATUS-019", "HELP-007"}
        return {r.requirement.id for r in result.requirements if r.outcome is Outcome.FAILED}

    assert failed(None) == set()
    assert failed(default_server) == {"STATUS-019", "HELP-007"}


def test_the_bad_signature_fault_is_caught_where_the_profile_answers_403(tmp_path: Path) -> None:
    path = profile_file(tmp_path, "bs403", f"[auth.errors]\nbad_signature = {FORBIDDEN}\n")
    options = RunOptions(
        profile=str(path),
        seed=29,
        only=("AUTH-013",),
        quick=True,
        workers=1,
        embedded_fault="auth-bad-signature-403",
    )
    failed = family_failures(run_suite(options), "auth")
    assert any("answered 401" in m and "answer is 403" in m for m in failed["AUTH-013"])


def test_a_reusable_nonce_is_not_refused_where_the_profile_allows_it(
    tmp_path: Path, default_server: str
) -> None:
    """``auth.nonce_single_use = false``: the reference server under that profile accepts a
    nonce again and passes, with AUTH-016 not exercised and saying why; the default profile
    fails that server on AUTH-016, and the reusable profile does not fail the default server."""
    path = profile_file(tmp_path, "reusable", "nonce_single_use = false")
    result = run(path)
    assert family_failures(result, "auth") == {}
    assert family_passed(result, "auth") >= EVERY_AUTH_ID - {"AUTH-016"}
    (auth_016,) = [r for r in result.requirements if r.requirement.id == "AUTH-016"]
    assert auth_016.outcome is Outcome.NOT_EXERCISED
    assert any(
        "auth.nonce_single_use = false" in (c.reason_not_exercised or "")
        for c in result.checks
        if "AUTH-016" in c.requirement_ids
    )
    with ReferenceServer(profile=load_profile(path)) as reusable:
        failed = family_failures(run(Path("default"), reusable.base_url), "auth")
    assert set(failed) == {"AUTH-016"}
    assert family_failures(run(path, default_server), "auth") == {}
