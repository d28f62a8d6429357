"""report.html: one self-contained page for a person (a newcomer, an implementer, an auditor).

Rendered with jinja2 from ``templates/report.html.j2`` with autoescaping on: every text of the
run is escaped, so HTML in a response body shows as text. The page has inline CSS only, no
script, no external asset, and a Content-Security-Policy that would block them anyway.
"""

from __future__ import annotations

import re
from functools import cache

import jinja2

from conformance.core.resources import package_data
from conformance.reporting.view import Body, ClippedBody, RunView, clip_body

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
    return env


def render(view: RunView) -> str:
    template = environment().get_template(TEMPLATE)
    return template.render(view=view, max_evidence=MAX_EVIDENCE)
