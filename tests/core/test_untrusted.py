"""untrusted: server text made harmless for a terminal, URL passwords masked."""

from __future__ import annotations

import time

import pytest

from conformance.core.untrusted import for_terminal, mask_url_passwords, printable

TITLE = "\x1b]0;pwned\x07"  # renames the terminal window
CLEAR = "\x1b[2J"  # clears the screen


def test_escape_sequences_are_shown_not_obeyed() -> None:
    shown = for_terminal(f"expected 400, got 200 {TITLE}{CLEAR}")
    assert "\x1b" not in shown and "\x07" not in shown
    assert shown == "expected 400, got 200 \\x1b]0;pwned\\x07\\x1b[2J"


def test_a_carriage_return_cannot_overprint_a_line_on_the_terminal() -> None:
    assert for_terminal("failed\rverdict: CONFORMANT") == "failed\\x0dverdict: CONFORMANT"
    assert for_terminal("line one\nline two\tend") == "line one\nline two\tend"


def test_reports_keep_carriage_returns_and_escape_the_rest() -> None:
    assert printable(f"a\r\n{CLEAR}") == ("a\r\n\\x1b[2J", True)
    assert printable("plain") == ("plain", False)
    assert printable(b"\xff".decode("utf-8", "surrogateescape")) == ("\\xff", True)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("http://user:s3cr3tpass@127.0.0.1:8000", "http://user:[redacted]@127.0.0.1:8000"),
        (
            "GET https://u:p%40ss@h.test/v1/payments?x=a@b: timed out",
            "GET https://u:[redacted]@h.test/v1/payments?x=a@b: timed out",
        ),
        ("'http://u:p@ss@h.test/v1'", "'http://u:[redacted]@h.test/v1'"),
        ("http://token123@h.test/", "http://[redacted]@h.test/"),
        (
            "http://127.0.0.1:8000/v1 and mail@example.test",
            "http://127.0.0.1:8000/v1 and mail@example.test",
        ),
    ],
)
def test_url_passwords_are_masked_wherever_they_stand(text: str, masked: str) -> None:
    assert mask_url_passwords(text) == masked
    assert for_terminal(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "a." * 200_000 + "://",
        "x://" * 100_000,
        "http://" + "u:p" * 200_000,
        "http://" + "a@" * 200_000,
    ],
    ids=["dotted words", "many schemes", "long userinfo", "many @"],
)
def test_masking_takes_linear_time_on_any_text(text: str) -> None:
    # quadratic masking took ~30 s on 80,000 characters; these are 400,000 and more
    started = time.monotonic()
    mask_url_passwords(text)
    assert time.monotonic() - started < 20


# Embeddings and overrides, isolates, and the marks: each can make a report line display its
# text reversed (an "expected 201, got 500" read as another status, a URL read backwards).
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@pytest.mark.parametrize("control", list(BIDI_CONTROLS), ids=lambda c: f"U+{ord(c):04X}")
def test_bidirectional_controls_are_escaped_as_the_other_controls_are(control: str) -> None:
    escaped = f"\\u{ord(control):04x}"
    assert printable(f"got 500{control}102 tog") == (f"got 500{escaped}102 tog", True)
    assert for_terminal(f"got 500{control}102 tog") == f"got 500{escaped}102 tog"


def test_right_to_left_text_itself_is_not_escaped() -> None:
    assert printable("مرحبا שלום") == ("مرحبا שלום", False)
