"""untrusted: server text made harmless for a terminal, URL passwords masked."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from conformance.core.untrusted import (
    for_terminal,
    mask_url_passwords,
    printable,
    split_url,
    url_password,
)

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


@pytest.mark.parametrize(
    "url",
    [
        "http://user:[redacted]@127.0.0.1:8080/v1/payments?limit=1",  # masked
        "http://user:pw@127.0.0.1:8080/v1/payments?limit=1",
        "http://[redacted]@127.0.0.1:8080/v1/payments?limit=1",  # a lone user name, masked
        "http://127.0.0.1:8080/v1/payments?limit=1",
    ],
)
def test_a_url_is_split_whether_its_password_is_masked_or_not(url: str) -> None:
    parts = split_url(url)  # urlsplit: "'redacted' does not appear to be an IPv4 or IPv6 address"
    assert (parts.scheme, parts.netloc, parts.path, parts.query) == (
        "http",
        "127.0.0.1:8080",
        "/v1/payments",
        "limit=1",
    )
    assert parts.port == 8080


def test_a_url_that_is_not_one_without_its_userinfo_is_still_refused() -> None:
    with pytest.raises(ValueError, match="Invalid IPv6 URL"):
        split_url("http://user:pw@[::1/v1")


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("http://user:pw@host/v1", "pw"),
        ("https://user:p@ss@host", "p@ss"),  # to the last "@"
        ("http://user:[redacted]@host/v1", None),
        ("http://user@host/v1", None),
        ("http://user:@host/v1", None),
        ("http://host/v1?next=http://a:b@c", None),  # another URL's, not this one's
    ],
)
def test_the_password_of_a_url(url: str, password: str | None) -> None:
    assert url_password(url) == password


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


def test_adjacent_controls_of_every_kind_are_each_escaped() -> None:
    run = "\x00\x1b\x9f\u202e\udc80\ud800\ufffe"  # \udc80: the byte 0x80 (surrogateescape)
    assert printable(f"a{run}\rb") == ("a\\x00\\x1b\\x9f\\u202e\\x80\\ud800\\ufffe\rb", True)
    assert for_terminal(f"a{run}\rb") == "a\\x00\\x1b\\x9f\\u202e\\x80\\ud800\\ufffe\\x0db"


def _fastest(work: Callable[[], object]) -> float:
    times = []
    for _ in range(5):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def test_a_long_run_of_controls_is_escaped_about_as_fast_as_json_escapes_it() -> None:
    # A gzip bomb's evidence is megabytes of NULs. One Python call per character made writing
    # a bomb run's reports take 20 s past its --max-duration (issue 17, point 4); one per run now,
    # through a plain dict made once (a dict subclass filling itself on first use: about 12).
    nuls = "\0" * (1024 * 1024)
    assert printable(nuls) == ("\\x00" * len(nuls), True)
    ratio = _fastest(lambda: printable(nuls)) / _fastest(lambda: json.dumps(nuls))
    assert ratio < 30, f"{ratio:.0f} times json.dumps"  # before: 175 to 200 times; now 6 to 8


def test_workflow_commands_in_server_text_are_shown_not_obeyed_by_a_ci_runner() -> None:
    # GitHub Actions obeys "##[...]" anywhere in a line and "::...::" where a line starts
    shown = for_terminal("got 200 ##[add-mask]tok\n::error::forged\n  ::warning::x ###[group]")
    assert "##[" not in shown
    assert not any(line.lstrip().startswith("::") for line in shown.splitlines())
    assert shown == (
        "got 200 #\\x23[add-mask]tok\n\\x3a:error::forged\n  \\x3a:warning::x ##\\x23[group]"
    )


def test_colons_inside_words_are_left_alone() -> None:
    assert for_terminal("http://[::1]:8000 Class::method a: b") == (
        "http://[::1]:8000 Class::method a: b"
    )
