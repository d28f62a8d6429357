"""report.html: one self-contained page for a person (a newcomer, an implementer, an auditor).

Rendered with jinja2 from ``templates/report.html.j2`` with autoescaping on: every text of the
run is escaped, so HTML in a response body shows as text. The page has inline CSS only, no
script, no external asset, and a Content-Security-Policy that would block them anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

import jinja2

from conformance.core.case_coverage import coverage_line
from conformance.core.diff import CATEGORIES, category_title, entry_note
from conformance.core.resources import package_data
from conformance.reporting.check_titles import check_title
from conformance.reporting.coverage import by_operation
from conformance.reporting.view import (
    Body,
    CheckView,
    ClippedBody,
    EvidenceView,
    RequirementView,
    RunView,
    _anchor,
    clip_body,
)

FILENAME = "report.html"
TEMPLATE = "report.html.j2"
BODY_LIMIT = 16_384
MAX_EVIDENCE = 5  # failing checks shown with evidence per requirement; results.json has all


def _clip(body: Body) -> ClippedBody:
    return clip_body(body, BODY_LIMIT)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")


def _number(value: int) -> str:
    return f"{value:,}"


@dataclass
class EvidencePlaces:
    """Where each exchange of the failures section is shown: once, where it first appears.

    One check often covers two requirements (a status and the body's shape), and two checks
    can fail on the same exchange; the later places link to the first instead of repeating it.
    """

    anchors: dict[tuple[str, int], str] = field(default_factory=dict)
    earlier: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, view: RunView, max_evidence: int) -> EvidencePlaces:
        places = cls()
        first: dict[EvidenceView, tuple[str, str]] = {}
        for requirement in view.failed:
            for check in requirement.failures[:max_evidence]:
                if check.evidence is None:
                    continue
                key = (requirement.id, check.index)
                if check.evidence in first:
                    places.earlier[key] = first[check.evidence]
                else:
                    anchor = f"ev-{requirement.anchor}-{check.index}"
                    places.anchors[key] = anchor
                    first[check.evidence] = (anchor, requirement.id)
        return places

    def anchor(self, requirement: RequirementView, check: CheckView) -> str:
        return self.anchors.get((requirement.id, check.index), "")

    def shown_before(
        self, requirement: RequirementView, check: CheckView
    ) -> tuple[str, str] | None:
        """(anchor, requirement id) of the place showing this exchange, if it is elsewhere."""
        return self.earlier.get((requirement.id, check.index))


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(package_data("reporting", "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["clip"] = _clip
    env.filters["slug"] = _slug
    env.filters["number"] = _number
    env.filters["check_title"] = check_title
    env.globals["entry_note"] = entry_note
    env.filters["requirement_anchor"] = _anchor
    return env


def _sentence(line: str) -> str:
    return line[:1].upper() + line[1:]


def render(view: RunView) -> str:
    template = environment().get_template(TEMPLATE)
    return template.render(
        view=view,
        operations=by_operation(view),
        case_line=_sentence(coverage_line(view.case_coverage, sampled=view.quick)),
        max_evidence=MAX_EVIDENCE,
        places=EvidencePlaces.of(view, MAX_EVIDENCE),
        replay_note=view.replay_note,
        categories=[(name, category_title(name).capitalize()) for name in CATEGORIES],
    )
