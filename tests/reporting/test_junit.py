"""junit.xml: what a CI JUnit viewer shows, one <testsuite> per section, one <testcase> per
requirement."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conformance.reporting import junit
from conformance.reporting.view import RunView
from tests.reporting.runs import HELPERS_OFF, HOSTILE_BODY


def parse(view: RunView) -> ET.Element:
    return ET.fromstring(junit.render(view).encode("utf-8"))


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {case.attrib["name"].split(":")[0]: case for case in root.iter("testcase")}


def test_one_testsuite_per_section_in_document_order(failing_view: RunView) -> None:
    root = parse(failing_view)
    assert root.tag == "testsuites"
    assert [s.attrib["name"] for s in root.findall("testsuite")] == [
        "spec 4 Endpoints",
        "spec 5 Authentication",
        "spec 7 Errors",
        "profile 2 Idempotency",
        "profile 6 Test helpers",
    ]


def test_one_testcase_per_requirement_named_by_id_and_text(failing_view: RunView) -> None:
    root = parse(failing_view)
    by_id = cases(root)
    assert sorted(by_id) == sorted(r.id for r in failing_view.requirements)
    assert len(list(root.iter("testcase"))) == len(failing_view.requirements)
    ops = by_id["OPS-002"]
    assert ops.attrib["classname"] == "spec 4"
    assert ops.attrib["name"] == "OPS-002: A response body MUST be JSON."


def test_counts_match_the_run(failing_view: RunView) -> None:
    root = parse(failing_view)
    assert (root.attrib["tests"], root.attrib["failures"], root.attrib["skipped"]) == (
        "7",
        "3",
        "1",
    )
    assert root.attrib["errors"] == "0"
    for suite in root.findall("testsuite"):
        testcases = suite.findall("testcase")
        assert int(suite.attrib["tests"]) == len(testcases)
        assert int(suite.attrib["failures"]) == sum(
            1 for c in testcases if c.find("failure") is not None
        )
        assert int(suite.attrib["skipped"]) == sum(
            1 for c in testcases if c.find("skipped") is not None
        )


def test_a_failed_requirement_carries_its_messages_and_evidence(failing_view: RunView) -> None:
    failure = cases(parse(failing_view))["OPS-002"].find("failure")
    assert failure is not None
    assert failure.attrib["message"] == "response is text/html, not JSON: <b>oops</b>"
    assert failure.attrib["type"] == "contract requirement"
    text = failure.text or ""
    assert "--- failure 1/2: schema/createPayment/content-type on createPayment" in text
    assert "status 500 for a valid request" in text
    assert "request: POST http://127.0.0.1:53117/v1/payments" in text
    assert "response: 400" in text
    assert HOSTILE_BODY in text  # as text: the XML layer escapes it, a viewer shows it
    assert "replay: payment-conformance run --only OPS-002 --seed 42 --quick" in text
    assert "reproduce with curl" in text


def test_a_profile_failure_says_it_comes_from_the_profile(failing_view: RunView) -> None:
    failure = cases(parse(failing_view))["IDEM-004"].find("failure")
    assert failure is not None
    assert failure.attrib["type"] == "profile requirement"
    assert "fix the server, or the profile" in (failure.text or "")


def test_huge_bodies_are_cut(failing_view: RunView) -> None:
    failure = cases(parse(failing_view))["IDEM-004"].find("failure")
    assert failure is not None
    text = failure.text or ""
    assert f"truncated: first {junit.BODY_LIMIT:,} of 200,010 characters shown" in text
    assert len(text) < 2 * junit.BODY_LIMIT


def test_passed_requirements_have_no_failure_and_no_skip(failing_view: RunView) -> None:
    passed = cases(parse(failing_view))["OPS-001"]
    assert list(passed) == []


def test_a_requirement_not_exercised_is_skipped_with_the_reason(failing_view: RunView) -> None:
    case = cases(parse(failing_view))["HELP-001"]
    skipped = case.find("skipped")
    assert skipped is not None
    assert skipped.attrib["message"] == HELPERS_OFF
    assert case.find("failure") is None


def test_every_suite_states_the_run_in_its_properties(passing_view: RunView) -> None:
    root = parse(passing_view)
    for suite in root.findall("testsuite"):
        props = {p.attrib["name"]: p.attrib["value"] for p in suite.iter("property")}
        assert props["seed"] == "42"
        assert props["contract_sha256"] == "3f2a" + "0" * 60
        assert props["profile_sha256"] == "a1b2" + "f" * 60
        assert props["verdict"] == "CONFORMANT"
        assert props["option.quick"] == "true"


def test_a_run_that_tested_nothing_skips_every_requirement(untested_view: RunView) -> None:
    root = parse(untested_view)
    assert root.attrib["tests"] == root.attrib["skipped"] == "7"
    assert root.attrib["failures"] == "0"
    assert all(c.find("skipped") is not None for c in root.iter("testcase"))


def test_binary_bodies_stay_valid_xml(failing_view: RunView) -> None:
    failure = cases(parse(failing_view))["OPS-002"].find("failure")
    assert failure is not None
    text = failure.text or ""
    assert "\\x89PNG" in text
    assert "binary or non-UTF-8 content" in text
