"""The steps a failure of a call sequence shows: the failing step and its cause whole, the middle
cut, within the message's size limit.

A long sequence's steps were cut at 4,000 characters, just before the step that showed the bug,
and a sequence whose shrinking was stopped showed unrelated steps in full while the step that
created the failing step's payment could be among those left out.
"""

from __future__ import annotations

from conformance.core.results import STEPS_HEADING, split_steps
from conformance.suite.stateful import Transcript
from conformance.suite.steps import STEPS_CHAR_LIMIT, causes, resource_ids
from conformance.suite.wire.check_properties import MESSAGE_LIMIT, clean_message

USDC = "pay_0a1b2c3d4e5f60718293a4b5"
ETH = "pay_99887766554433221100ffee"
PADDING = '{"amount":"10.00","currency_id":"ETH","chain_id":"eip155:1","note":"' + "x" * 120


def long_sequence(unrelated: int = 60, usdc_at: int = 0) -> Transcript:
    """Unrelated ETH steps, the USDC payment created at position ``usdc_at``, then the cancel of
    that payment that fails."""
    transcript = Transcript()
    for number in range(unrelated + 1):
        if number == usdc_at:
            transcript.step("create pay-usdc00000000000001: 10 USDC")
            transcript.note(f'POST /v1/payments {{"currency":"USDC"}} -> 201 {{"id":"{USDC}"}}')
            continue
        transcript.step(f"deposit exact to payment pay-eth{number:017d} (pending)")
        transcript.note(f"POST /v1/test-helpers/payments/{ETH}/deposit {PADDING} -> 200 {{}}")
    transcript.step("cancel payment pay-usdc00000000000001 (pending)")
    transcript.note(f"POST /v1/payments/{USDC}/cancel -> 500 {{}}")
    return transcript


def numbered(rendered: str) -> list[str]:
    return [line.strip() for line in rendered.splitlines() if line.strip()[:1].isdigit()]


def test_a_long_sequence_keeps_its_head_its_cause_and_its_failing_step() -> None:
    rendered = long_sequence(unrelated=60, usdc_at=30).render()
    assert len(rendered) <= STEPS_CHAR_LIMIT
    steps = numbered(rendered)
    assert steps[0].startswith("1. deposit exact")  # the head
    assert "31. create pay-usdc00000000000001: 10 USDC" in steps  # what the failing step uses
    assert steps[-1] == "62. cancel payment pay-usdc00000000000001 (pending)"  # the failure
    assert f"POST /v1/payments/{USDC}/cancel -> 500 {{}}" in rendered
    assert f'-> 201 {{"id":"{USDC}"}}' in rendered
    assert "steps cut ..." in rendered


def test_the_cut_says_how_many_steps_it_left_out() -> None:
    rendered = long_sequence(unrelated=60, usdc_at=30).render()
    shown = len(numbered(rendered))
    cut = [line.strip() for line in rendered.splitlines() if "steps cut" in line]
    counted = sum(int(line.split()[1]) for line in cut)
    assert shown + counted == 62


def test_a_short_sequence_is_shown_whole() -> None:
    rendered = long_sequence(unrelated=3, usdc_at=1).render()
    assert [s.split(".")[0] for s in numbered(rendered)] == ["1", "2", "3", "4", "5"]
    assert "cut" not in rendered


def test_the_steps_that_created_what_the_failing_step_uses() -> None:
    steps = [
        ["create A: pay-aaaa00000001", "-> 201 pay_aaaa0000000000000001"],
        ["create B: pay-bbbb00000001", "-> 201 pay_bbbb0000000000000001"],
        ["split of pay_aaaa0000000000000001 to merchant mer_cccc000000000001"],
        ["list payments"],
        ["cancel pay_aaaa0000000000000001"],
    ]
    assert resource_ids("cancel pay_aaaa0000000000000001 (expires_in_secs=600)") == {
        "pay_aaaa0000000000000001"
    }
    assert causes(steps) == {0, 4}


def test_a_message_too_long_keeps_the_end_of_its_step_list() -> None:
    head = "cancel answered 500"
    steps = [f"  {n}. step {n} " + "y" * 150 for n in range(1, 60)]
    message = "\n".join([head, STEPS_HEADING, *steps])
    cleaned = clean_message(message)
    assert len(cleaned) <= MESSAGE_LIMIT + 100
    shown_head, shown_steps = split_steps(cleaned)
    assert shown_head == head
    assert shown_steps[1] == steps[0]  # the first step
    assert shown_steps[-1] == steps[-1]  # the last step: the failure
    assert any("lines cut" in line for line in shown_steps)
