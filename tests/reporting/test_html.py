"""report.html: one self-contained page stating what was tested, the verdict and the evidence."""

from __future__ import annotations

import html as html_lib
import re
from html.parser import HTMLParser

from conformance.reporting import html
from conformance.reporting.view import RunView
from tests.reporting.runs import HOSTILE_BODY


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
    assert '<div class="verdict pass">CONFORMANT</div>' in page
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
        "Replay only this requirement payment-conformance run --only IDEM-004 --seed 42 --quick"
        in text
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
