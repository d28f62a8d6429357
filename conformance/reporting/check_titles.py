"""Titles in words for check ids, which report.html shows before the id itself.

Most check ids are already words ("auth createPayment nonce replayed"). Two kinds are not:
schema checks, recorded as ``schema.<group>.<check>`` (titled from ``check_titles.yaml``), and
pytest node ids (``test_idempotency.py::test_no_key_needed[createPayment]``), titled from the
test's name.
"""

from __future__ import annotations

import re
from functools import cache

from conformance.core.resources import package_data
from conformance.core.yamldata import load_yaml

FILENAME = "check_titles.yaml"

_DOTTED = re.compile(r"(?P<family>\w+)\.(?P<group>\w+)\.(?P<check>\w+)")
_NODE_ID = re.compile(r"test_\w+\.py::test_(?P<name>\w+?)(?:\[(?P<param>.*)\])?")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@cache
def _titles() -> dict[str, dict[str, dict[str, str]]]:
    text = package_data("reporting", FILENAME).read_text(encoding="utf-8")
    loaded: dict[str, dict[str, dict[str, str]]] = load_yaml(text)
    return loaded


def _words(name: str) -> str:
    """``response_schema_conformance`` or ``ErrorCodeMatches`` as a sentence start."""
    words = " ".join(_CAMEL.sub(" ", name).replace("_", " ").split()).lower()
    return words[:1].upper() + words[1:]


def check_title(check_id: str) -> str:
    """The title of ``check_id`` in words; an id already in words is its own title."""
    dotted = _DOTTED.fullmatch(check_id)
    family = _titles().get(dotted["family"]) if dotted else None
    if dotted and family is not None:
        words = family["checks"].get(dotted["check"]) or _words(dotted["check"])
        phases = family["groups"].get(dotted["group"], f"{dotted['group']} phase")
        return f"{words} ({phases})"
    node = _NODE_ID.fullmatch(check_id)
    if node:
        title = _words(node["name"])
        return f"{title} ({node['param']})" if node["param"] else title
    return check_id
