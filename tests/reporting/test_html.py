"""report.html: one self-contained page stating what was tested, the verdict and the evidence."""

from __future__ import annotations

import html as html_lib
import re
from html.parser import HTMLParser

from conformance.core.results import RunResult, Target
from conformance.reporting import html
from conformance.reporting.view import RunView, build_view
from conformance.suite.schema.test_schema import STATEFUL_CHECKS as STATEFUL_CHECK_NAMES
from conformance.suite.schema.test_schema import UNIT_CHECKS as UNIT_CHECK_NAMES
from tests.reporting.runs import FAILED, HOSTILE_BODY, check, evidence, make_run


class Tags(HTMLParser):
    """Every start tag with its attributes, as a browser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


def text_of(page: str) -> str:
    """The page as a reader sees it: tags out, entities decoded, whitespace collapsed."""
    return " ".join(html_lib.unescape(re.sub(r"<[^>]*>", " ", page)).split())


def test_it_states_what_was_tested_and_the_verdict(failing_view: RunView) -> None:
    text = text_of(html.render(failing_view))
    assert "NOT CONFORMANT" in text
    assert "Server embedded reference server at http://127.0.0.1:53117" in text
    assert "Suite version payment-conformance 0.1.0" in text
    assert "Contract SHA-256 3f2a" + "0" * 60 in text
    assert "Profile SHA-256 a1b2" + "f" * 60 in text
    assert "Seed 42" in text
    assert "Started (UTC) 2026-11-22T10:04:11Z" in text


def test_a_passing_run_says_conformant(passing_view: RunView) -> None:
    page = html.render(passing_view)
    assert '<div class="verdict pass">CONFORMANT<span class="scope">, 6 of 7 requirements' in page
    assert 'id="failures"' not in page


def test_a_run_that_tested_nothing_says_so(untested_view: RunView) -> None:
    text = text_of(html.render(untested_view))
    assert "NOT TESTED" in text
    assert "No requirement was exercised: this run does not show conformance." in text
    assert "preflight failed: the server did not answer" in text


def test_requirements_are_grouped_by_section(failing_view: RunView) -> None:
    page = html.render(failing_view)
    headings = re.findall(r'<h3 id="sec-([^"]+)">', page)
    assert headings == ["spec-4", "spec-5", "spec-7", "profile-2", "profile-6"]
    spec5 = page[page.index('id="sec-spec-5"') : page.index('id="sec-spec-7"')]
    assert "AUTH-001" in spec5 and "AUTH-002" in spec5
    assert "OPS-001" not in spec5


def test_a_failure_shows_its_evidence_and_replay_command(failing_view: RunView) -> None:
    page = html.render(failing_view)
    failure = page[page.index('id="fail-req-IDEM-004"') :]
    failure = failure[: failure.index("</article>")]
    text = text_of(failure)
    assert "replay created a second payment" in text
    assert (
        "Replay this requirement's checks payment-conformance run --only IDEM-004 --seed 42 "
        "--quick" in text
    )
    assert "POST http://127.0.0.1:53117/v1/payments" in text
    assert "HTTP 201" in text
    assert "Reproduce with curl curl -X POST http://127.0.0.1:53117/v1/payments" in text
    assert "profile requirement" in text


def test_hostile_content_is_shown_as_text_never_as_markup(failing_view: RunView) -> None:
    page = html.render(failing_view)
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "<b>oops</b>" not in page
    assert "&lt;script&gt;alert(" in page
    assert HOSTILE_BODY in text_of(page)
    assert {tag for tag, _ in tags(page)}.isdisjoint({"script", "img", "iframe", "object"})


def test_huge_bodies_are_cut_with_a_note(failing_view: RunView) -> None:
    page = html.render(failing_view)
    assert f"truncated: first {html.BODY_LIMIT:,} of 200,010 characters shown" in page
    assert "x" * (html.BODY_LIMIT + 1) not in page
    assert len(page) < 200_000


def test_binary_bodies_are_shown_as_escapes(failing_view: RunView) -> None:
    page = html.render(failing_view)
    assert "\\x89PNG" in page
    assert "binary or non-UTF-8 content" in page


def test_the_page_loads_nothing_from_elsewhere(failing_view: RunView) -> None:
    page = html.render(failing_view)
    for tag, attrs in tags(page):
        for name in ("src", "href", "action", "data"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("http:", "https:", "//")), (tag, name, value)
    assert {tag for tag, _ in tags(page)}.isdisjoint({"script", "link", "iframe"})
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page


def test_every_failed_requirement_links_to_its_failure(failing_view: RunView) -> None:
    page = html.render(failing_view)
    anchors = {attrs.get("id") for _, attrs in tags(page)}
    links = [a["href"] for t, a in tags(page) if t == "a" and a.get("href")]
    for href in links:
        assert href is not None and href.startswith("#")
        assert href[1:] in anchors
    assert "#fail-req-OPS-002" in links


# -- newcomer rough edges: titles, evidence once, narrow screens, long bodies -----------------
LONG_BODY = '{"trace":"' + "long-body-" * 400 + 'end-of-the-long-body"}'
OTHER_BODY = '{"detail":"' + "other-body-" * 200 + 'end-of-the-other-body"}'


def rough_edges_run(target: Target | None = None) -> RunResult:
    """Failing checks with internal ids, one check under two requirements, equal evidence twice."""
    shared = check(
        "schema.unit.response_schema_conformance",
        FAILED,
        "OPS-002",
        "ERR-001",
        message="12 of 23 responses failed (coverage 16, examples 1, fuzzing 6)",
        evidence_=evidence(status=201, response_body=LONG_BODY),
    )
    refused = check(
        "boundaries createPayment body.amount maxLength=128 refused",
        FAILED,
        "AUTH-001",
        message="not refused",
        evidence_=evidence(status=201, response_body=OTHER_BODY),
    )
    status = check(
        "boundaries createPayment body.amount maxLength=128 refused with the validation status",
        FAILED,
        "AUTH-002",
        message="expected 400, got 201",
        evidence_=evidence(status=201, response_body=OTHER_BODY),  # equal, not the same object
    )
    node = check(
        "test_idempotency.py::test_no_key_needed[createPayment]",
        FAILED,
        "IDEM-004",
        family="idempotency",
        message="a key was required",
    )
    return make_run([shared, refused, status, node], target=target)


def rough_edges_page(target: Target | None = None) -> str:
    return html.render(build_view(rough_edges_run(target), reports_dir="out"))


def check_headings(page: str) -> list[str]:
    return [
        " ".join(html_lib.unescape(re.sub(r"<[^>]*>", " ", h)).split())
        for h in re.findall(r"<h4[^>]*>(.*?)</h4>", page, re.S)
    ]


def test_checks_have_human_titles_and_keep_their_id_in_small_print() -> None:
    page = rough_edges_page()
    headings = check_headings(page)
    assert headings, "no failing check shown"
    assert (
        "Response matches the documented schema (examples, coverage and fuzzing phases)"
        in headings[0]
    )
    assert any(h.startswith("No key needed") for h in headings)
    for heading in headings:
        assert not re.match(r"(Check )?[a-z_]+\.[a-z_]+\.[a-z_]+", heading), heading
        assert not heading.startswith("test_"), heading
    assert '<small class="check-id">schema.unit.response_schema_conformance</small>' in page
    assert (
        '<small class="check-id">test_idempotency.py::test_no_key_needed[createPayment]</small>'
        in page
    )


def test_every_check_id_of_a_real_run_gets_a_title_in_words() -> None:
    from conformance.reporting.check_titles import check_title

    for group, phases in (("unit", "examples, coverage and fuzzing phases"), ("stateful", "")):
        for name in (*UNIT_CHECK_NAMES, *STATEFUL_CHECK_NAMES):
            title = check_title(f"schema.{group}.{name}")
            assert "_" not in title and name not in title, title
            assert title[0].isupper(), title
            assert (phases or "stateful phase") in title
    assert check_title("auth createPayment nonce replayed") == "auth createPayment nonce replayed"


def test_the_same_evidence_is_shown_once_and_linked_from_elsewhere() -> None:
    page = rough_edges_page()
    assert page.count("end-of-the-long-body") == 1
    assert page.count("end-of-the-other-body") == 1
    text = text_of(page)
    assert "Same exchange as under OPS-002" in text
    assert "Same exchange as under AUTH-001" in text
    anchors = {attrs.get("id") for _, attrs in tags(page)}
    same = re.findall(r'<p class="same-exchange">[^<]*<a href="#([^"]+)"', page)
    assert len(same) == 2
    assert all(target in anchors for target in same)


class Parents(HTMLParser):
    """The element enclosing each table."""

    VOID = frozenset({"meta", "br", "img", "hr", "input", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.table_parents: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.table_parents.append(self.stack[-1])
        if tag not in self.VOID:
            self.stack.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass


def style_of(page: str) -> str:
    return page[page.index("<style>") : page.index("</style>")]


def test_tables_scroll_sideways_inside_their_box_on_a_narrow_screen() -> None:
    page = rough_edges_page()
    parser = Parents()
    parser.feed(page)
    assert len(parser.table_parents) >= 3
    for tag, attrs in parser.table_parents:
        assert (tag, attrs.get("class")) == ("div", "table-wrap")
    assert re.search(r"\.table-wrap\s*\{[^}]*overflow-x:\s*auto", style_of(page))


def test_the_reference_fault_line_is_only_for_the_embedded_server() -> None:
    external = text_of(rough_edges_page(Target("https://sandbox.example.test", embedded=False)))
    assert "Reference fault" not in external
    embedded = text_of(rough_edges_page())
    assert "Reference fault none" in embedded


def test_long_bodies_scroll_on_screen_and_print_whole() -> None:
    page = rough_edges_page()
    style = style_of(page)
    screen = re.search(r"pre\.evidence\s*\{([^}]*)\}", style)
    assert screen is not None
    assert re.search(r"max-height:\s*\d", screen.group(1))
    assert re.search(r"overflow:\s*auto", screen.group(1))
    printed = style[style.index("@media print") :]
    rule = re.search(r"pre\.evidence\s*\{([^}]*)\}", printed)
    assert rule is not None
    assert "max-height: none" in rule.group(1) and "overflow: visible" in rule.group(1)
    bodies = [a for t, a in tags(page) if t == "pre" and "body" in (a.get("class") or "")]
    assert bodies and all("evidence" in (a.get("class") or "").split() for a in bodies)
