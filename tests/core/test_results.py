"""The run results model: verdicts and the command replaying one requirement."""

from __future__ import annotations

import shlex

from conformance.core.catalogue import Requirement, load_catalogue
from conformance.core.results import (
    NO_CHECK_REASON,
    STEPS_HEADING,
    CheckResult,
    Outcome,
    RunResult,
    Target,
    fold,
    split_steps,
)


def run(target: Target, options: dict[str, str] | None = None) -> RunResult:
    return RunResult(
        suite_version="0.1.0",
        contract_sha256="0" * 64,
        profile_name="default",
        profile_sha256="f" * 64,
        seed=42,
        target=target,
        started_at="2026-11-22T10:04:11Z",
        duration_s=1.0,
        requests_sent=0,
        requirements=(),
        checks=(),
        options=options or {},
    )


EMBEDDED = Target("http://127.0.0.1:53117", embedded=True)


def test_replaying_against_the_embedded_server_needs_only_the_requirement_and_seed() -> None:
    assert run(EMBEDDED).replay_command("IDEM-004") == (
        "payment-conformance run --only IDEM-004 --seed 42"
    )


def test_a_remote_target_is_named_with_base_url() -> None:
    remote = run(Target("https://sandbox.example.test", embedded=False))
    assert remote.replay_command("AUTH-002") == (
        "payment-conformance run --base-url https://sandbox.example.test --only AUTH-002 --seed 42"
    )


def test_the_caller_can_pass_a_scrubbed_base_url() -> None:
    remote = run(Target("https://user:pw@sandbox.example.test", embedded=False))
    command = remote.replay_command("AUTH-002", base_url="https://[REDACTED]@sandbox.example.test")
    assert "pw@" not in command
    assert shlex.split(command)[2:4] == ["--base-url", "https://[REDACTED]@sandbox.example.test"]


def test_a_reference_fault_is_replayed_with_the_cli_fault_option() -> None:
    faulted = run(Target("http://127.0.0.1:1", embedded=True, fault="idem-replay-new-resource"))
    command = faulted.replay_command("IDEM-004")
    assert "--fault idem-replay-new-resource" in command
    assert "--embedded-fault" not in command  # a pytest option, unknown to the CLI


def test_profile_and_quick_are_repeated_so_the_same_cases_are_sent() -> None:
    faulted = run(
        Target("http://127.0.0.1:1", embedded=True, fault="idem-replay-new-resource"),
        {"profile": "my.toml", "quick": "true"},
    )
    assert faulted.replay_command("IDEM-004") == (
        "payment-conformance run --fault idem-replay-new-resource --profile my.toml "
        "--only IDEM-004 --seed 42 --quick"
    )


def test_the_default_profile_and_a_full_run_add_nothing() -> None:
    command = run(EMBEDDED, {"profile": "default", "quick": "false"}).replay_command("OPS-001")
    assert "--profile" not in command
    assert "--quick" not in command


def test_words_with_spaces_are_quoted_for_the_shell() -> None:
    spaced = run(EMBEDDED, {"profile": "my profiles/p.toml"})
    words = shlex.split(spaced.replay_command("OPS-001"))
    assert words[words.index("--profile") + 1] == "my profiles/p.toml"


def test_the_embedded_servers_escape_reading_is_repeated() -> None:
    literal = run(EMBEDDED, {"escape_reading": "literal"})
    for command in (literal.replay_command("STATUS-011"), literal.rerun_command()):
        words = shlex.split(command)
        assert words[words.index("--server-escape-reading") + 1] == "literal"
    assert "--server-escape-reading" not in run(EMBEDDED, {}).rerun_command()


def test_tls_options_and_gateway_headers_are_repeated_with_the_header_values_masked() -> None:
    remote = run(
        Target("https://sandbox.example.test", embedded=False),
        {
            "cacert": "certs/ca.pem",
            "client_cert": "client.pem",
            "client_key": "client.key",
            "headers": "X-Gateway-Key,X-Tenant",
        },
    )
    connection = [
        *("--cacert", "certs/ca.pem", "--client-cert", "client.pem", "--client-key", "client.key"),
        *("-H", "X-Gateway-Key: [redacted]", "-H", "X-Tenant: [redacted]"),
    ]
    for command in (remote.replay_command("AUTH-002"), remote.rerun_command()):
        words = shlex.split(command)
        assert words[2:4] == ["--base-url", "https://sandbox.example.test"]
        assert words[4:14] == connection
    insecure = run(Target("https://sandbox.example.test", embedded=False), {"insecure": "true"})
    assert "--insecure" in shlex.split(insecure.rerun_command())


def test_split_steps_separates_a_message_from_its_step_list() -> None:
    message = f"expected 409, got 200\n{STEPS_HEADING}\n  1. create\n\n     POST /v1/x -> 201"
    assert split_steps(message) == (
        "expected 409, got 200",
        [STEPS_HEADING, "  1. create", "     POST /v1/x -> 201"],
    )
    assert split_steps("expected 409, got 200") == ("expected 409, got 200", [])


# -- fold: every not-exercised requirement says why ----------------------------------------
def _requirements(*ids: str) -> list[Requirement]:
    return list(load_catalogue().select(ids, ()))


def test_a_requirement_no_check_names_says_no_selected_check_covers_it() -> None:
    (result,) = fold(_requirements("AUTH-002"), [])
    assert result.outcome is Outcome.NOT_EXERCISED
    assert result.reason_not_exercised == NO_CHECK_REASON
    assert "no check of the selected families covers it" in NO_CHECK_REASON


def test_a_requirement_whose_checks_did_not_reach_it_gives_their_reasons() -> None:
    skipped = [
        CheckResult("a", "x", ("AUTH-002",), Outcome.NOT_EXERCISED, reason_not_exercised="r1"),
        CheckResult("b", "x", ("AUTH-002",), Outcome.NOT_EXERCISED, reason_not_exercised="r2"),
        CheckResult("c", "x", ("AUTH-002",), Outcome.NOT_EXERCISED, reason_not_exercised="r1"),
    ]
    (result,) = fold(_requirements("AUTH-002"), skipped)
    assert result.reason_not_exercised == "r1; r2"


def test_checks_without_a_reason_still_leave_a_reason() -> None:
    silent = CheckResult("a", "x", ("AUTH-002",), Outcome.NOT_EXERCISED)
    (result,) = fold(_requirements("AUTH-002"), [silent])
    assert result.reason_not_exercised == "its 1 check(s) ran but none reached it"


def test_an_exercised_requirement_has_no_reason_not_exercised() -> None:
    checks = [
        CheckResult("a", "x", ("AUTH-002",), Outcome.PASSED),
        CheckResult("b", "x", ("AUTH-002",), Outcome.NOT_EXERCISED, reason_not_exercised="r"),
    ]
    (result,) = fold(_requirements("AUTH-002"), checks)
    assert result.outcome is Outcome.PASSED and result.reason_not_exercised is None
