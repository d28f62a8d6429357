"""How much of an exchange evidence keeps: a server's headers must not bloat the reports.

A server answering 40 headers of 8 KB each, repeated in the evidence of every check, made a
20 MB ``results.json``. Evidence keeps at most ``MAX_HEADERS`` headers of at most
``MAX_HEADER_CHARS`` characters each, and says what it left out. Cut after redaction: a secret
cut in two would no longer be recognised.
"""

from __future__ import annotations

from collections.abc import Mapping

MAX_HEADERS = 32
MAX_HEADER_CHARS = 1024
DROPPED_HEADERS = "[headers not shown]"
"""The name of the entry that counts the headers left out."""


def cap_headers(
    headers: Mapping[str, str],
    max_headers: int = MAX_HEADERS,
    max_chars: int = MAX_HEADER_CHARS,
) -> dict[str, str]:
    """The first ``max_headers`` headers, each value cut at ``max_chars`` characters."""
    kept: dict[str, str] = {}
    for index, (name, value) in enumerate(headers.items()):
        if index == max_headers:
            kept[DROPPED_HEADERS] = f"{len(headers) - max_headers} more headers"
            break
        if len(value) > max_chars:
            value = f"{value[:max_chars]}[... {len(value) - max_chars} more characters]"
        kept[name[:max_chars]] = value
    return kept
