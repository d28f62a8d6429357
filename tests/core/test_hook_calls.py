"""A profile hook is the implementer's code: one that hangs or raises costs a call, not a run."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

import pytest

from conformance.core import hook_calls
from conformance.core.signing import Scheme, SignerHookError, SigningInput
from conformance.core.webhook_verifier import Verifier

NEVER = threading.Event()


def hangs(*_: object) -> object:
    NEVER.wait()
    return True


def exits(*_: object) -> object:
    raise SystemExit(3)


@pytest.fixture(autouse=True)
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook_calls, "HOOK_TIMEOUT_S", 0.2)


def test_a_hook_that_answers_gives_its_answer() -> None:
    call = hook_calls.call_hook(lambda a, b: a + b, 2, 3)
    assert (call.value, call.error, call.timed_out) == (5, None, False)


def test_a_hook_that_never_answers_is_left_behind_after_the_timeout() -> None:
    started = time.monotonic()
    call = hook_calls.call_hook(hangs)
    assert call.timed_out
    assert time.monotonic() - started < 5


def test_a_hook_that_exits_is_an_error_of_the_hook_not_of_the_process() -> None:
    call = hook_calls.call_hook(exits)
    assert isinstance(call.error, SystemExit)


def test_a_verifier_that_hangs_says_no_and_why() -> None:
    verifier = Verifier("slow.module:verify", "", hangs)
    assert verifier.verifies({}, b"{}", "whsec_x") == (
        False,
        "slow.module:verify did not answer within 0.2 s",
    )
    assert Verifier("bye:verify", "", exits).verifies({}, b"", "s") == (
        False,
        "bye:verify raised SystemExit",
    )


def test_a_signer_that_hangs_is_a_signer_error_naming_the_hook() -> None:
    def signer(inp: SigningInput, credential: object) -> Mapping[str, str]:
        return hangs()  # type: ignore[return-value]

    scheme = Scheme(hook=signer, hook_name="slow.module:sign")
    request = SigningInput("GET", "/v1/payments", b"", "1700000000", "n" * 16, "mk_test")
    with pytest.raises(SignerHookError, match=r"slow.module:sign did not answer within 0.2 s"):
        scheme.headers(request, object())  # type: ignore[arg-type]
