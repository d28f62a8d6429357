"""Locate the data files the package ships (OpenAPI document, profiles, catalogues)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def openapi_dir() -> Path:
    """The folder holding the hand-written OpenAPI document.

    An installed wheel carries it as ``conformance/_openapi``; a source checkout (or an
    editable install) has it at the repository root as ``openapi/``.
    """
    for candidate in (_PACKAGE / "_openapi", _PACKAGE.parent / "openapi"):
        if (candidate / "payment-service.yaml").is_file():
            return candidate
    raise FileNotFoundError(
        "the OpenAPI document payment-service.yaml is missing from this install"
    )


def openapi_document_path() -> Path:
    return openapi_dir() / "payment-service.yaml"


def package_data(*parts: str) -> Path:
    """A data file inside the package: ``package_data("profiles", "default.toml")``."""
    return _PACKAGE.joinpath(*parts)
