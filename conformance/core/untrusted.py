"""Show untrusted text harmlessly: unprintable characters escaped, URL passwords masked.

Server bodies, headers and error messages reach the console and the reports. A terminal obeys
the escape sequences in them (``ESC ] 0 ; title BEL`` renames the window, ``ESC [ 2 J`` clears
the screen), a CI runner obeys the workflow commands in them (GitHub Actions: ``##[error]``
anywhere in a line, ``::add-mask::`` at its start), and a ``--base-url`` such as
``http://user:password@host`` would print its password wherever the URL is shown.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

from conformance.core.redaction import REDACTED

# Characters shown as escapes: C0 controls except tab, newline, carriage return; DEL and the C1
# controls; lone surrogates (bytes that were not UTF-8, decoded with surrogateescape); the
# non-characters XML 1.0 forbids; and the bidirectional-text controls (embeddings and overrides
# U+202A-U+202E, isolates U+2066-U+2069, the marks U+200E, U+200F and U+061C), with which a
# server could make a report line display its text reversed.
_CONTROL_RANGES = (
    (0x00, 0x08), (0x0B, 0x0C), (0x0E, 0x1F), (0x7F, 0x9F), (0xD800, 0xDFFF), (0xFFFE, 0xFFFF),
    (0x061C, 0x061C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2066, 0x2069),
)  # fmt: skip
_CONTROLS = "".join(f"{chr(low)}-{chr(high)}" for low, high in _CONTROL_RANGES)
# Runs of them, each run escaped at once: a body of a million NULs is one match, not a million.
_UNPRINTABLE = re.compile(f"[{_CONTROLS}]+")
# On a terminal a carriage return rewrites the line: a server could overprint a verdict.
_TERMINAL_UNPRINTABLE = re.compile(f"[\r{_CONTROLS}]+")
# scheme://authority in a text. Linear time on any text: the scheme is bounded and the authority
# ends at the first "/" (so never runs into the next "://"); its userinfo runs to the last "@",
# so a password holding a raw "@" is masked whole.
_URL_AUTHORITY = re.compile(r"(?i)([a-z][a-z0-9+.-]{0,31}://)([^/?#\s'\"<>]*)")
# GitHub Actions reads "##[name]..." anywhere in a line of a step's output, and "::name::..."
# where a line starts (after blanks). "::" is broken wherever a word starts with it, since a
# console that wraps a long text may start a line at any blank.
_LEGACY_COMMAND = "##["
_COMMAND = re.compile(r"(?<!\S)::")


def _escape(code: int) -> str:
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


# A plain dict, made once: str.translate looks every character up, and a dict subclass (made on
# first use) or a function per character makes a bomb's report several times slower to write.
_ESCAPES = {
    code: _escape(code)
    for low, high in (*_CONTROL_RANGES, (0x0D, 0x0D))
    for code in range(low, high + 1)
}


def _escape_run(match: re.Match[str]) -> str:
    return match.group().translate(_ESCAPES)


def printable(text: str) -> tuple[str, bool]:
    """``text`` with unprintable characters as ``\\xNN`` escapes, and whether any was escaped."""
    cleaned, count = _UNPRINTABLE.subn(_escape_run, text)
    return cleaned, count > 0


def _mask_userinfo(match: re.Match[str]) -> str:
    scheme, authority = match.groups()
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return match.group()
    user, colon, _ = userinfo.partition(":")
    if colon:
        return f"{scheme}{user}:{REDACTED}@{host}"
    return f"{scheme}{REDACTED}@{host}"  # a lone user name is often a token


def mask_url_passwords(text: str) -> str:
    """Every ``scheme://user:password@`` in ``text`` as ``scheme://user:[redacted]@``."""
    if "://" not in text:
        return text
    return _URL_AUTHORITY.sub(_mask_userinfo, text)


def split_url(url: str) -> SplitResult:
    """``urlsplit`` of ``url`` with its userinfo left out, so that a URL masked by
    ``mask_url_passwords`` can be read too: ``user:[redacted]@`` is no valid URL to ``urlsplit``
    (brackets are for IPv6 hosts: ``ValueError``), and no reader needs the userinfo but
    ``url_password``. ``ValueError`` when the rest is no valid URL either."""
    match = _URL_AUTHORITY.match(url)
    if match is not None:
        scheme, authority = match.groups()
        url = scheme + authority.rpartition("@")[2] + url[match.end() :]
    return urlsplit(url)


def url_password(url: str) -> str | None:
    """The password in ``url``'s userinfo as written (``None``: there is none, or it is masked)."""
    match = _URL_AUTHORITY.match(url)
    if match is None:
        return None
    userinfo, at, _ = match.group(2).rpartition("@")
    _, colon, password = userinfo.partition(":")
    if not at or not colon or not password or password == REDACTED:
        return None
    return password


def inert_workflow_commands(text: str) -> str:
    """``text`` with no CI workflow command left in it: the character that completes one is
    shown as its escape (``##[error]`` -> ``#\\x23[error]``, ``::add-mask::`` ->
    ``\\x3a:add-mask::``), read as before by a person, no longer by the runner."""
    if _LEGACY_COMMAND in text:
        text = text.replace(_LEGACY_COMMAND, "#\\x23[")
    if "::" in text:
        text = _COMMAND.sub(r"\\x3a:", text)
    return text


def for_terminal(text: str) -> str:
    """Untrusted ``text`` ready for the console (and a CI log): no control sequence, no
    workflow command, no URL password."""
    shown = _TERMINAL_UNPRINTABLE.sub(_escape_run, mask_url_passwords(text))
    return inert_workflow_commands(shown)
