"""Which requirement ids each schema check verifies, per operation and per failure.

``schema_requirements.yaml`` (section ``requirements``), beside this module, lists, for every
check, candidate requirement ids, optionally by the status class of the response (``2xx``,
``4xx``) or by exact status. For one operation only the candidates whose catalogue entry lists
that operation (or ``all``) count. A failure that names fields (a missing ``checkout_url``, a
negated ``interval_secs``) is pinned to the candidates whose text names one of those fields,
when there are such candidates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from conformance.core.catalogue import Requirement, load_catalogue
from conformance.core.profile import Profile, load_profile
from conformance.core.yamldata import load_yaml

_RULES_FILE = Path(__file__).with_name("schema_requirements.yaml")


@cache
def rules() -> dict[str, Any]:
    """``schema_requirements.yaml``: ``requirements``, ``tags`` and ``pinned_checks``."""
    loaded: dict[str, Any] = load_yaml(_RULES_FILE.read_text(encoding="utf-8"))
    return loaded


@cache
def catalogue() -> dict[str, Requirement]:
    """The requirement catalogue, by id (``all`` already expanded to operation ids)."""
    return {r.id: r for r in load_catalogue().requirements}


@cache
def _default_profile() -> Profile:
    return load_profile()


def requirement_operations() -> dict[str, tuple[str, ...]]:
    return {rid: entry.operations for rid, entry in catalogue().items()}


def _profile_keys(mapping: dict[str, list[str]], status: int, profile: Profile) -> list[str]:
    """The keys of ``mapping`` that name a profile answer (``status.not_found``) with
    ``status``: several when the profile gives them the same status."""
    found = []
    for key in mapping:
        section, dot, name = str(key).partition(".")
        if dot and profile.error(section, name).status == status:
            found.append(key)
    return found


def _candidates(check: str, status: int | None, mode: str | None, profile: Profile) -> list[str]:
    mapping = rules()["requirements"].get(check)
    if mapping is None:
        raise KeyError(f"judge/schema_requirements.yaml has no requirements for check {check!r}")
    if isinstance(mapping, list):
        return list(mapping)
    if status is None and mode is None:  # every id the check can name
        return list(dict.fromkeys(rid for ids in mapping.values() for rid in ids))
    if status is not None:
        named = _profile_keys(mapping, status, profile)
        if named:
            return list(dict.fromkeys(rid for key in named for rid in mapping[key]))
    keys = [] if status is None else [str(status), f"{str(status)[0]}xx"]
    for key in [*keys, *([mode] if mode else []), "other"]:
        if key in mapping:
            return list(mapping[key])
    return []


ANY_4XX = 499
"""A status looked up by its class alone: the rules' ``4xx`` entry (no 4xx status has one of its
own)."""


def requirement_ids(
    check: str,
    operation_id: str,
    status: int | None = None,
    mode: str | None = None,
    profile: Profile | None = None,
) -> tuple[str, ...]:
    """Ids ``check`` verifies on ``operation_id``, for a response with ``status`` to a case of
    ``mode`` ("positive" or "negative"), the statuses of ``profile``'s answers (default: the
    default profile's) telling which answer a status is."""
    entries = catalogue()
    result = []
    for rid in _candidates(check, status, mode, profile or _default_profile()):
        entry = entries.get(rid)
        if entry is None:
            raise KeyError(
                f"judge/schema_requirements.yaml names requirement {rid}, unknown to the catalogue"
            )
        if operation_id in entry.operations and rid not in result:
            result.append(rid)
    return tuple(result)


def passable_ids(check: str, operation_id: str) -> tuple[str, ...]:
    """Ids a response can verify (not only break): those of every status but 5xx."""
    mapping = rules()["requirements"].get(check)
    if not isinstance(mapping, dict):
        return requirement_ids(check, operation_id)
    keys = [key for key in mapping if not str(key).startswith("5")]
    found: dict[str, None] = {}
    for key in keys:
        found.update(dict.fromkeys(mapping[key]))
    ops = catalogue()
    return tuple(rid for rid in found if operation_id in ops[rid].operations)


def is_pinned(check: str) -> bool:
    return check in rules().get("pinned_checks", [])


def pin_to_fields(ids: Iterable[str], fields: Iterable[str]) -> tuple[str, ...]:
    """The ids whose text names one of ``fields`` (empty when none does)."""
    names = {f for f in fields if f and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", f)}
    if not names:
        return ()
    entries = catalogue()
    pinned = tuple(
        rid
        for rid in ids
        if any(
            re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", entries[rid].text)
            for n in names
        )
    )
    return pinned


def tag_ids(tags: Iterable[str]) -> frozenset[str]:
    """The requirement ids ``rules.yaml`` ties to tags (a coverage scenario such as
    ``non_unique_items``, a broken format such as ``format:date-time``)."""
    table = rules().get("tags", {})
    return frozenset(rid for tag in tags for rid in table.get(tag, ()))


def pin(candidates: Iterable[str], fields: Iterable[str], tags: Iterable[str]) -> tuple[str, ...]:
    """The candidates a case or failure points at: by the fields it names and by its tags (both
    when they agree); empty when neither points anywhere."""
    candidates = tuple(candidates)
    by_fields = pin_to_fields(candidates, fields)
    tied = tag_ids(tags)
    by_tags = tuple(rid for rid in candidates if rid in tied)
    both = tuple(rid for rid in by_fields if rid in by_tags)
    if both:
        return both
    return tuple(dict.fromkeys((*by_fields, *by_tags)))
