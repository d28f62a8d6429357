"""A webhook secret rotation gives a secret the endpoint never had (WH-011)."""

from __future__ import annotations

from conformance.core.results import Outcome
from tests.validator.crossing import ALPHA, BETA, Traffic

PATH = "/v1/webhook-endpoints/we_primary/rotate-secret"
SECRET_1 = "whsec_" + "A" * 43 + "="
SECRET_2 = "whsec_" + "B" * 43 + "="


def rotate(
    traffic: Traffic, key: str, secret: str, *, api_key: str = ALPHA, replayed: bool = False
) -> None:
    answer = {"id": "we_primary", "secret": secret}
    traffic.send(
        "rotateWebhookEndpointSecret", "POST", PATH, api_key=api_key, key=key, answer=answer,
        replayed=replayed,
    )  # fmt: skip


def test_a_rotation_answering_the_previous_secret_fails_wh_011() -> None:
    traffic = Traffic()
    rotate(traffic, "k1", SECRET_1)
    rotate(traffic, "k2", SECRET_1)
    assert traffic.outcomes("WH-011") == [Outcome.PASSED, Outcome.FAILED]


def test_rotations_answering_new_secrets_pass_wh_011() -> None:
    traffic = Traffic()
    rotate(traffic, "k1", SECRET_1)
    rotate(traffic, "k2", SECRET_2)
    assert traffic.outcomes("WH-011") == [Outcome.PASSED, Outcome.PASSED]


def test_a_replayed_rotation_answers_its_secret_again() -> None:
    traffic = Traffic()
    rotate(traffic, "k1", SECRET_1)
    rotate(traffic, "k1", SECRET_1, replayed=True)
    assert traffic.outcomes("WH-011") == [Outcome.PASSED]


def test_another_merchants_endpoint_of_the_same_id_is_another_endpoint() -> None:
    traffic = Traffic()
    rotate(traffic, "k1", SECRET_1)
    rotate(traffic, "k2", SECRET_2, api_key=BETA)
    assert Outcome.FAILED not in traffic.outcomes("WH-011")


def test_secrets_the_recorder_masked_are_not_judged() -> None:
    traffic = Traffic()
    rotate(traffic, "k1", "[redacted]")
    rotate(traffic, "k2", "[redacted]")
    assert traffic.outcomes("WH-011") == []
