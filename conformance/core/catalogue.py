"""The requirement catalogue: every testable statement of the spec and of the profile.

Each requirement has a stable id (``AUTH-003``), the document and section it comes from, its
layer (``contract``: the specification states it; ``profile``: the implementer's declared
choice) and one sentence in RFC 2119 words. Reports are built from this catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


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
    operations: tuple[str, ...] = field(default=())
