"""summary.md: the verdict and the section table, short enough for a CI step summary."""

from __future__ import annotations

from conformance.core.catalogue import load_catalogue
from conformance.core.results import STEPS_HEADING
from conformance.reporting import summary
from conformance.reporting.view import RunView, build_view
from tests.reporting.runs import FAILED, check, make_run


def test_a_failing_run_leads_with_its_verdict(failing_view: RunView) -> None:
    lines = summary.render(failing_view).splitlines()
    assert lines[0] == "## payment-conformance: ❌ NOT CONFORMANT, 6 of 7 requirements exercised"
    assert lines[2].startswith(
        "**NOT CONFORMANT, 6 of 7 requirements exercised**: 3 passed, 3 failed, 1 not exercised "
        "(8 check results recorded, 1,912 requests in 74.2 s"
    )


def test_passing_and_untested_runs_say_so(passing_view: RunView, untested_view: RunView) -> None:
    assert summary.render(passing_view).startswith(
        "## payment-conformance: ✅ CONFORMANT, 6 of 7 requirements exercised\n"
    )
    assert summary.render(untested_view).startswith(
        "## payment-conformance: ⚠️ NOT TESTED, 0 of 7 requirements exercised\n"
    )


def test_the_section_table_has_one_row_per_section_and_a_total(failing_view: RunView) -> None:
    text = summary.render(failing_view)
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[:8] == [
        "| section | passed | failed | not exercised |",
        "|---|--:|--:|--:|",
        "| spec 4 Endpoints | 1 | 1 | 0 |",
        "| spec 5 Authentication | 1 | 1 | 0 |",
        "| spec 7 Errors | 1 | 0 | 0 |",
        "| profile 2 Idempotency | 0 | 1 | 0 |",
        "| profile 6 Test helpers | 0 | 0 | 1 |",
        "| **total** | **3** | **3** | **1** |",
    ]
    assert table[8] == "| operation | passed | failed | not exercised | status codes answered |"


def test_failed_requirements_are_listed_with_their_replay_command(failing_view: RunView) -> None:
    text = summary.render(failing_view)
    assert "### Failed requirements (3)" in text
    assert "- **IDEM-004** (profile, MUST)" in text
    assert "replay: `payment-conformance run --only IDEM-004 --seed 42 --quick`" in text
    assert "status 500" not in text  # only the first failing check's message, then a count
    assert "(+1 more failing checks)" in text


def test_run_text_cannot_inject_markdown_or_html(failing_view: RunView) -> None:
    text = summary.render(failing_view)
    assert "<b>" not in text
    assert "response is text/html, not JSON: &lt;b&gt;oops&lt;/b&gt;" in text


def test_escape_makes_markdown_inert() -> None:
    assert summary.escape("a|b *c* <i>\n[x](y)") == "a\\|b \\*c\\* &lt;i&gt; \\[x\\](y)"
    assert summary.escape("abcdef", limit=4) == "abc…"


def test_code_survives_backticks() -> None:
    assert summary.code("plain") == "`plain`"
    assert summary.code("a `b` c") == "``a `b` c``"
    assert summary.code("`x`") == "`` `x` ``"


def test_a_failure_of_a_call_sequence_lists_its_steps_as_code() -> None:
    message = "\n".join(
        [
            "expected 409, got 200",
            STEPS_HEADING,
            "  1. create a payment",
            '     POST /v1/payments -> 201 {"id": "p_1"}',
            "  2. cancel it twice",
        ]
    )
    run = make_run([check("c1", FAILED, "IDEM-004", message=message)])
    text = summary.render(build_view(run, load_catalogue()))
    assert "  expected 409, got 200  \n" in text
    assert f"  `{STEPS_HEADING}`  \n" in text
    assert '  `POST /v1/payments -> 201 {"id": "p_1"}`  \n' in text
    assert "  `2. cancel it twice`  \n" in text


def test_steps_shown_as_code_carry_no_workflow_command() -> None:
    # a CI step that prints summary.md must not have the runner obey the server's text
    message = "\n".join(["expected 409", STEPS_HEADING, "  1. POST -> 200 ##[add-mask]tok"])
    run = make_run([check("c1", FAILED, "IDEM-004", message=message)])
    text = summary.render(build_view(run, load_catalogue()))
    assert "##[" not in text
    assert "`1. POST -> 200 #\\x23[add-mask]tok`" in text
