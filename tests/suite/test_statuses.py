"""statuses: the status codes the server answered, per operation, as both HTTP stacks saw them."""

from __future__ import annotations

from conformance.core.profile import load_profile
from conformance.suite.statuses import StatusTally
from conformance.suite.wire import tap as wiretap
from conformance.suite.wire.tap import WireExchange


def exchange(method: str, url: str, status: int | None) -> WireExchange:
    return WireExchange(0.0, method, url, (), b"", status=status)


def tally() -> StatusTally:
    return StatusTally.of_profile(load_profile("default"))


def test_answers_are_counted_per_operation_and_status() -> None:
    seen = tally()
    seen(exchange("POST", "http://127.0.0.1:8000/v1/payments", 201))
    seen(exchange("POST", "http://127.0.0.1:8000/v1/payments", 201))
    seen(exchange("POST", "http://127.0.0.1:8000/v1/payments", 400))
    seen(exchange("POST", "http://127.0.0.1:8000/v1/payments/pay_1/cancel?x=1", 409))
    seen(exchange("POST", "http://127.0.0.1:8000/v1/test-helpers/payments/pay_1/deposit", 200))
    assert seen.take() == {
        "createPayment": {201: 2, 400: 1},
        "cancelPayment": {409: 1},
        "testDepositPayment": {200: 1},
    }
    assert seen.take() == {}  # taken: the next test starts from nothing


def test_no_answer_and_paths_of_no_operation_are_not_counted() -> None:
    seen = tally()
    seen(exchange("POST", "http://127.0.0.1:8000/v1/payments", None))
    seen(exchange("GET", "http://127.0.0.1:8000/v1/nowhere/at/all", 404))
    seen(exchange("DELETE", "http://127.0.0.1:8000/v1/payments", 405))
    assert seen.take() == {}


def test_a_base_url_with_a_path_prefix() -> None:
    seen = tally()
    seen(exchange("GET", "https://gw.example.test/sandbox/v1/payments", 200))
    seen(exchange("GET", "https://gw.example.test/sandbox/v2/payments", 404))
    assert seen.take() == {"listPayments": {200: 1}}


def test_listening_on_the_wire_tap() -> None:
    seen = tally()
    with seen.listening():
        assert wiretap.listening()
        wiretap.notify(exchange("GET", "http://127.0.0.1:8000/v1/payments", 200))
    wiretap.notify(exchange("GET", "http://127.0.0.1:8000/v1/payments", 500))
    assert seen.take() == {"listPayments": {200: 1}}


def test_a_tests_counts_travel_as_plain_json_values() -> None:
    seen = tally()
    seen(exchange("POST", "http://127.0.0.1:8000/v1/payments", 201))
    assert seen.take_property() == {"createPayment": {"201": 1}}
    assert seen.take_property() == {}
