"""A schema-phase exchange read as the judge reads a call (suite/schema/schema_call.py)."""

from __future__ import annotations

from conformance.suite.schema.schema_call import path_params


def test_path_parameters_are_read_from_the_path_as_sent_and_decoded() -> None:
    template = "/v1/payments/{id}/cancel"
    assert path_params(template, "/v1/payments/pay_1/cancel") == {"id": "pay_1"}
    assert path_params(template, "/v1/payments/%C3%A9t%C3%A9/cancel") == {"id": "été"}
    assert path_params(template, "/api/v1/payments/a%2Fb/cancel") == {"id": "a/b"}


def test_a_path_shorter_than_its_template_has_no_parameters() -> None:
    assert path_params("/v1/payments/{id}/cancel", "/v1/payments") == {}
