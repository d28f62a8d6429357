"""The requirement catalogue: every testable statement of the spec and of the profile.

Each requirement has a stable id (``AUTH-003``), the document and section it comes from, its
layer (``contract``: the specification states it; ``profile``: the implementer's declared
choice) and one sentence in RFC 2119 words. Reports are built from this catalogue.

The catalogue is data: ``conformance/requirements.yaml``. ``load_catalogue()`` reads and
validates it and raises ``CatalogueError`` naming the offending entry when it is malformed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from conformance.core.resources import package_data
from conformance.core.yamldata import load_yaml

SHIPPED_CATALOGUE = package_data("requirements.yaml")

LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
ALL_OPERATIONS = "all"

_ID = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z][A-Z0-9]*)*-[0-9]{3}")
_PREFIX = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z][A-Z0-9]*)*")
# Every upper-case RFC 2119 / RFC 8174 keyword, so that a second or a non-catalogue one is caught.
_KEYWORD = re.compile(
    r"(?<![A-Za-z0-9_-])(MUST NOT|MUST|SHALL NOT|SHALL|SHOULD NOT|SHOULD|NOT RECOMMENDED"
    r"|RECOMMENDED|MAY|REQUIRED|OPTIONAL)(?![A-Za-z0-9_-])"
)
_TOP_KEYS = {"operations", "helper_operations", "sections", "requirements"}
_SECTION_KEYS = {"document", "number", "title"}
_ENTRY_KEYS = {"id", "section", "layer", "text", "operations"}
_DOCUMENTS = ("spec", "profile")


class CatalogueError(ValueError):
    """A catalogue file that cannot be used; the message names the entry and the problem."""


class Layer(StrEnum):
    CONTRACT = "contract"
    PROFILE = "profile"


@dataclass(frozen=True)
class Section:
    """A section of a source document, e.g. ``Section("spec", "5", "Authentication")``."""

    document: str  # "spec" or "profile"
    number: str
    title: str

    @property
    def key(self) -> str:
        """``"spec 5"`` or ``"profile 2"``: how filters and reports name a section."""
        return f"{self.document} {self.number}"

    def __str__(self) -> str:
        return f"{self.key} {self.title}"


@dataclass(frozen=True)
class Requirement:
    id: str
    section: Section
    layer: Layer
    level: str  # MUST, MUST NOT, SHOULD, MAY, as written in ``text``
    text: str
    operations: tuple[str, ...] = field(default=())  # ``[all]`` is expanded to the 20 ids

    @property
    def prefix(self) -> str:
        """``"PAY-STATE"`` for ``PAY-STATE-004``."""
        return self.id.rsplit("-", 1)[0]


_Matcher = Callable[[Requirement], bool]


@dataclass(frozen=True)
class Catalogue:
    requirements: tuple[Requirement, ...]
    sections: tuple[Section, ...]
    operations: tuple[str, ...]  # the specification's operation ids, in its order
    helper_operations: tuple[str, ...]  # the profile's test helpers
    source: str
    sha256: str
    _by_id: dict[str, Requirement] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {r.id: r for r in self.requirements})

    def __len__(self) -> int:
        return len(self.requirements)

    def __iter__(self) -> Iterator[Requirement]:
        return iter(self.requirements)

    def __contains__(self, requirement_id: object) -> bool:
        return requirement_id in self._by_id

    def get(self, requirement_id: str) -> Requirement | None:
        return self._by_id.get(requirement_id)

    def section(self, key: str) -> Section | None:
        """The section named ``"spec 5"`` (case and surrounding spaces ignored)."""
        wanted = " ".join(key.split()).lower()
        return next((s for s in self.sections if s.key == wanted), None)

    def by_section(self) -> dict[Section, tuple[Requirement, ...]]:
        """Every section in document order, with its requirements (possibly none)."""
        return {s: tuple(r for r in self.requirements if r.section == s) for s in self.sections}

    def select(self, only: Iterable[str] = (), skip: Iterable[str] = ()) -> tuple[Requirement, ...]:
        """The requirements matched by ``only`` (all when empty) and by no ``skip`` selector.

        A selector is an id (``IDEM-004``), an id prefix (``IDEM``, ``PAY-STATE``; ``PAY`` does
        not take in ``PAY-STATE``) or a section key (``spec 5``). An unknown selector raises
        ``CatalogueError``, so that a typo never silently selects nothing.
        """
        only_matchers = [self._matcher(s) for s in only]
        skip_matchers = [self._matcher(s) for s in skip]
        return tuple(
            r
            for r in self.requirements
            if (not only_matchers or any(m(r) for m in only_matchers))
            and not any(m(r) for m in skip_matchers)
        )

    def _matcher(self, selector: str) -> _Matcher:
        section = self.section(selector)
        if section is not None:
            return lambda r: r.section == section
        wanted = selector.strip().upper()
        if wanted in self._by_id:
            return lambda r: r.id == wanted
        if any(r.prefix == wanted for r in self.requirements):
            return lambda r: r.prefix == wanted
        raise CatalogueError(
            f"unknown requirement selector {selector!r}: give an id (IDEM-004), an id prefix "
            f"(IDEM) or a section ({', '.join(s.key for s in self.sections[:2])}, ...)"
        )


def catalogue_sha256(path: Path | None = None) -> str:
    """SHA-256 of the catalogue file's bytes (the shipped one by default), for reports."""
    return hashlib.sha256((path or SHIPPED_CATALOGUE).read_bytes()).hexdigest()


def load_catalogue(path: Path | None = None) -> Catalogue:
    """Read and validate a catalogue file; the shipped one (cached) when ``path`` is None."""
    if path is None or path.resolve() == SHIPPED_CATALOGUE.resolve():
        return _load_shipped()
    return _load(path)


@cache
def _load_shipped() -> Catalogue:
    return _load(SHIPPED_CATALOGUE)


def _load(path: Path) -> Catalogue:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogueError(f"cannot read catalogue {str(path)!r}: {exc.strerror}") from None
    try:
        data = load_yaml(raw)
    except yaml.YAMLError as exc:
        raise CatalogueError(f"catalogue {str(path)!r} is not valid YAML: {exc}") from None
    return _build(data, source=str(path), sha256=hashlib.sha256(raw).hexdigest())


def _fail(where: str, problem: str) -> CatalogueError:
    return CatalogueError(f"invalid catalogue: {where}: {problem}")


def _names(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(key, "must be a list of non-empty strings")
    if len(set(value)) != len(value):
        raise _fail(key, "names an operation twice")
    return tuple(value)


def _build(data: object, *, source: str, sha256: str) -> Catalogue:
    if not isinstance(data, dict):
        raise _fail("(top level)", "must be a mapping with sections and requirements")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _fail("(top level)", f"unknown key {', '.join(map(str, unknown))}")
    operations = _names(data, "operations")
    helpers = _names(data, "helper_operations")
    sections = _sections(data.get("sections"))
    entries = data.get("requirements")
    if not isinstance(entries, list) or not entries:
        raise _fail("requirements", "must be a non-empty list")
    known_ops = {*operations, *helpers}
    index = {s.key: (i, s) for i, s in enumerate(sections)}
    requirements: list[Requirement] = []
    seen: set[str] = set()
    last_number: dict[str, int] = {}
    last_section = 0
    for i, entry in enumerate(entries):
        req = _requirement(i, entry, index, known_ops, operations)
        where = f"requirement {req.id}"
        if req.id in seen:
            raise _fail(where, "duplicate id")
        seen.add(req.id)
        number = int(req.id[-3:])
        if number <= last_number.get(req.prefix, 0):
            raise _fail(where, f"ids of {req.prefix} must be numbered upward in file order")
        last_number[req.prefix] = number
        position = index[req.section.key][0]
        if position < last_section:
            raise _fail(
                where,
                f"out of order: it is in section {req.section.key} but follows an entry of "
                f"{sections[last_section].key} (entries are ordered by section)",
            )
        last_section = position
        requirements.append(req)
    return Catalogue(
        requirements=tuple(requirements),
        sections=sections,
        operations=operations,
        helper_operations=helpers,
        source=source,
        sha256=sha256,
    )


def _sections(raw: object) -> tuple[Section, ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail("sections", "must be a non-empty list")
    sections: list[Section] = []
    for i, entry in enumerate(raw):
        where = f"sections[{i}]"
        if not isinstance(entry, dict) or set(entry) != _SECTION_KEYS:
            raise _fail(where, "must have exactly the keys document, number and title")
        if entry["document"] not in _DOCUMENTS:
            raise _fail(where, f"document must be one of {', '.join(_DOCUMENTS)}")
        if not all(isinstance(entry[k], str) and entry[k] for k in ("number", "title")):
            raise _fail(where, "number and title must be non-empty strings (quote the number)")
        section = Section(entry["document"], entry["number"], entry["title"])
        if any(s.key == section.key for s in sections):
            raise _fail(where, f"section {section.key} is listed twice")
        sections.append(section)
    return tuple(sections)


def _requirement(
    i: int,
    entry: object,
    sections: dict[str, tuple[int, Section]],
    known_ops: set[str],
    spec_ops: tuple[str, ...],
) -> Requirement:
    where = f"requirements[{i}]"
    if not isinstance(entry, dict):
        raise _fail(where, "must be a mapping")
    rid = entry.get("id")
    if isinstance(rid, str):
        where = f"requirement {rid} (requirements[{i}])"
    unknown = sorted(map(str, set(entry) - _ENTRY_KEYS))
    if unknown:
        raise _fail(where, f"unknown key {', '.join(unknown)}")
    missing = [k for k in ("id", "section", "layer", "text") if k not in entry]
    if missing:
        raise _fail(where, f"missing key {', '.join(missing)}")
    if not isinstance(rid, str) or not _ID.fullmatch(rid):
        raise _fail(where, f"id {rid!r} must look like PREFIX-NNN (e.g. AUTH-001, PAY-STATE-004)")
    section = sections.get(str(entry["section"]))
    if section is None:
        raise _fail(where, f"section {entry['section']!r} is not one of the listed sections")
    try:
        layer = Layer(entry["layer"])
    except ValueError:
        raise _fail(where, f"layer {entry['layer']!r} must be contract or profile") from None
    text = entry["text"]
    if not isinstance(text, str) or not text.strip():
        raise _fail(where, "text must be a non-empty string")
    return Requirement(
        id=rid,
        section=section[1],
        layer=layer,
        level=_level(where, text),
        text=" ".join(text.split()),
        operations=_operations(where, entry.get("operations", []), known_ops, spec_ops),
    )


def _level(where: str, text: str) -> str:
    words = [m.group(1) for m in _KEYWORD.finditer(text)]
    if len(words) != 1:
        found = ", ".join(words) if words else "none"
        raise _fail(where, f"text must contain exactly one RFC 2119 level word (found {found})")
    if words[0] not in LEVELS:
        raise _fail(where, f"level word {words[0]} is not used here: write {', '.join(LEVELS)}")
    return words[0]


def _operations(
    where: str, raw: object, known: set[str], spec_ops: tuple[str, ...]
) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(o, str) for o in raw):
        raise _fail(where, "operations must be a list of operation ids")
    if raw == [ALL_OPERATIONS]:
        return spec_ops
    unknown = [o for o in raw if o not in known]
    if unknown:
        raise _fail(where, f"unknown operation {unknown[0]!r} (write [all] or operation ids)")
    if len(set(raw)) != len(raw):
        raise _fail(where, "operations names an operation twice")
    return tuple(raw)
