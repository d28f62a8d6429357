"""Idempotency-Keys (spec 4, profile 2 and 4): the ids of a request's key, replays, and the
rules across the requests sharing a key.

A request without a required key breaks IDEM-001 and IDEM-005 (refused with the profile's
error), one whose key is out of the contract's bounds LIMIT-001 and IDEM-006: the schema phase
and the validator name a request's key by these, whatever else the request breaks.

A replay answers the stored response: its body byte for byte, marked as a replay where the
profile declares a marker. A marker on an answer with nothing stored under its key, or with
another body, replays nothing: that is the marker's own failure (IDEM-008), not a sign that
the request was taken for an earlier one.

``KeyObserver`` is fed the requests sent with a key, in order, and judges each against what
was stored under its key for its API key (profile 2): a repeat of a stored request gets the
stored answer, marked (IDEM-007, IDEM-008); the key with another body or path is refused as
reused (IDEM-010, IDEM-011); a key whose uses were refused, or another API key's, is free
(IDEM-014, IDEM-015). The validator feeds it recorded exchanges, the idempotency family the
requests it sends; the family knows more of its requests (``observe``'s ``expected`` and
``new_key``) and so judges answers the validator leaves alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from conformance.core.contract import IDEMPOTENCY_HEADER
from conformance.core.profile import ErrorSpec, Profile
from conformance.core.redaction import REDACTED
from conformance.core.results import Outcome
from conformance.judge.findings import Finding
from conformance.judge.schema_requirements import requirement_operations
from conformance.judge.tables import TABLE_LIMIT, BoundedTable, digest

# (refused at all, refused with the profile's answer)
MISSING_KEY_IDS = ("IDEM-001", "IDEM-005")
INVALID_KEY_IDS = ("LIMIT-001", "IDEM-006")
NOT_REQUIRED_IDS = ("IDEM-002", "IDEM-003", "IDEM-018")  # settle's key, and the GETs'
KEY_CHECK = "idempotency"  # the check of a request's key (or its absence) against its answer
KEY_ACCEPTED = "IDEM-004"  # keys of every length within the bounds are accepted
ON_BOUND = "LIMIT-010"  # a value on a limit's bound is not a contract violation
REPLAY = "idempotent_replay"  # the check of the rules across the requests sharing a key
NO_REPLAY_MARKER = (
    'the profile declares no replay marker (idempotency.replay_header = ""): a replay is judged '
    "by its status and body alone (IDEM-007)"
)
EARLIER = "an earlier exchange"


def accepted_key_ids(length: int, bounds: tuple[int, int]) -> tuple[str, ...]:
    """What a key of ``length`` within ``bounds`` must be accepted under: IDEM-004, and
    LIMIT-010 for a key on a bound."""
    return (KEY_ACCEPTED, ON_BOUND) if length in bounds else (KEY_ACCEPTED,)


def replays(body: bytes, earlier: bytes | None, *, marked: bool, marker_declared: bool) -> bool:
    """Whether an answer of ``body`` replays the answer ``earlier`` stored under its key (None:
    nothing is stored there). Without a declared marker the body alone tells."""
    return earlier is not None and body == earlier and (marked or not marker_declared)


def is_marked(value: str | None) -> bool:
    """The replay marker's header value says this is a replay."""
    return (value or "").lower() == "true"


class KeyAdmission:
    """What a request's Idempotency-Key, or its absence, calls for (spec 4, profile 2): a
    required key missing is refused with the profile's error (IDEM-001, IDEM-005), and so is a
    key outside the contract's bounds (LIMIT-001, IDEM-006); a key within them is accepted
    (IDEM-004, and LIMIT-010 on a bound); an operation that needs no key does not refuse a
    request for lacking one (IDEM-002, IDEM-003, IDEM-018). A masked key (a recording's) is
    taken to be within the bounds. Ids are those naming the request's operation."""

    def __init__(self, profile: Profile) -> None:
        idem = profile.idempotency
        self.bounds = (idem.min_length, idem.max_length)
        self._missing = idem.missing
        self._invalid = idem.invalid
        self._operations = requirement_operations()
        self._scopes: dict[tuple[tuple[str, ...], str], tuple[str, ...]] = {}

    def refusal(self, key: str | None, *, requires: bool, accepts: bool) -> ErrorSpec | None:
        """The profile's refusal the request's key calls for (None: the key lets it in)."""
        if key is None:
            return self._missing if requires else None
        low, high = self.bounds
        if accepts and key != REDACTED and not low <= len(key) <= high:
            return self._invalid
        return None

    def judge(
        self,
        operation_id: str,
        key: str | None,
        *,
        requires: bool,
        accepts: bool,
        status: int,
        code: object,
        expected: int | None = None,
    ) -> tuple[Finding, ...]:
        """The verdicts on the answer ``status`` (with the error ``code``) to a request with
        ``key`` (None: without one) to an operation that ``requires`` or ``accepts`` a key.

        ``expected``: the status of the request's success, given by a caller that knows the
        request valid apart from its key: then a refusal of its key must be the profile's
        (another refusal fails), and a request its key lets in must get that status."""
        low, high = self.bounds
        if key is None and requires:
            what = f"no {IDEMPOTENCY_HEADER}"
            found = _refused(MISSING_KEY_IDS, self._missing, what, status, code, expected)
        elif key is None:
            found = self._not_required(operation_id, status, code, expected)
        elif not accepts or key == REDACTED:
            found = []
        else:
            what = f"an {IDEMPOTENCY_HEADER} of {len(key)} characters (allowed {low} to {high})"
            if low <= len(key) <= high:
                found = self._accepted(key, what, status, code, expected)
            else:
                found = _refused(INVALID_KEY_IDS, self._invalid, what, status, code, expected)
        return tuple(s for f in found if (s := self._scoped(f, operation_id)) is not None)

    def _not_required(
        self, operation_id: str, status: int, code: object, expected: int | None
    ) -> list[Finding]:
        if code is not None and code == self._missing.code:
            message = f"{operation_id} needs no {IDEMPOTENCY_HEADER}, yet was refused with {code}"
            return [Finding(KEY_CHECK, NOT_REQUIRED_IDS, Outcome.FAILED, message)]
        if expected is not None and status != expected:
            message = (
                f"without an {IDEMPOTENCY_HEADER}: expected {expected}, got {_answer(status, code)}"
            )
            return [Finding(KEY_CHECK, NOT_REQUIRED_IDS, Outcome.FAILED, message)]
        if 200 <= status < 300:
            message = f"without an {IDEMPOTENCY_HEADER}: processed ({status})"
            return [Finding(KEY_CHECK, NOT_REQUIRED_IDS, Outcome.PASSED, message)]
        return []

    def _accepted(
        self, key: str, what: str, status: int, code: object, expected: int | None
    ) -> list[Finding]:
        ids = accepted_key_ids(len(key), self.bounds)
        invalid = self._invalid
        # without a pinned code a refusal of that status need not be the key's
        if invalid.code is not None and invalid.matches(status, code):
            return [
                Finding(
                    KEY_CHECK, ids, Outcome.FAILED, f"{what} refused with {_answer(status, code)}"
                )
            ]
        if expected is not None and status != expected:
            message = f"{what}: expected {expected}, got {_answer(status, code)}"
            return [Finding(KEY_CHECK, ids, Outcome.FAILED, message)]
        if 200 <= status < 300 and (expected is not None or len(key) in self.bounds):
            return [Finding(KEY_CHECK, ids, Outcome.PASSED, f"{what} accepted")]
        return []

    def _scoped(self, finding: Finding, operation_id: str) -> Finding | None:
        key = (finding.ids, operation_id)
        ids = self._scopes.get(key)
        if ids is None:  # worked out once per combination: this runs for every exchange
            ids = tuple(r for r in finding.ids if operation_id in self._operations.get(r, ()))
            self._scopes[key] = ids
        if ids == finding.ids:
            return finding
        return finding._replace(ids=ids) if ids else None


def _refused(
    ids: tuple[str, str],
    answer: ErrorSpec,
    what: str,
    status: int,
    code: object,
    expected: int | None,
) -> list[Finding]:
    """The verdicts on a request its key must get refused: ``ids`` are (refused at all,
    refused with the profile's ``answer``)."""
    if 200 <= status < 300:
        return [Finding(KEY_CHECK, ids, Outcome.FAILED, f"{what}: accepted ({status})")]
    if answer.matches(status, code):
        return [
            Finding(KEY_CHECK, ids, Outcome.PASSED, f"{what}: refused with {_answer(status, code)}")
        ]
    if expected is None:
        return []  # refused for something else, perhaps looked at first
    refused, coded = ids
    wanted = f"{answer.status} {answer.code or ''}".rstrip()
    return [
        Finding(
            KEY_CHECK,
            (refused,),
            Outcome.PASSED if 400 <= status < 500 else Outcome.FAILED,
            f"{what}: answered {status}",
        ),
        Finding(
            KEY_CHECK,
            (coded,),
            Outcome.FAILED,
            f"{what}: expected {wanted}, got {_answer(status, code)}",
        ),
    ]


def _answer(status: int, code: object) -> str:
    return f"{status} {code}" if code is not None else str(status)


def key_scope(api_key: str, key: str) -> bytes:
    """What a server stores a response under: the Idempotency-Key of one API key (IDEM-015)."""
    return digest(api_key, key)


@dataclass(frozen=True, slots=True)
class KeyUse:
    """A request sent with an Idempotency-Key, and its answer, as the key's rules read them."""

    api_key: str
    key: str
    method: str
    path: str
    query: str
    request_body: bytes
    status: int
    code: str | None  # the answer's error code, read for a 4xx (None: none, or not held)
    body: bytes  # the answer's body (empty when ``missing``)
    marked: bool  # the answer carries the profile's replay marker
    at: float | None = None  # when the request was sent (Unix seconds), for the retention
    source: str = ""  # where it is recorded, for the messages
    missing: str | None = None  # why the answer's body is not held, when it is not


class KeyVerdict(NamedTuple):
    findings: tuple[Finding, ...]
    replayed: bool  # taken as a repeat of a stored request (same fingerprint)
    first_use: bool  # nothing was stored under the key for the request's API key


@dataclass(frozen=True, slots=True)
class _Stored:
    """An accepted request under an Idempotency-Key: its fingerprint and its response."""

    fingerprint: bytes  # digest of method, path, query and body
    target: bytes  # digest of method and path
    status: int
    body: bytes | None  # digest of its body; None: not held
    at: float | None
    source: str
    # Whether an answer without the replay header was seen: requests sent at once with one key
    # are recorded in start order, so the original execution need not come first.
    original_seen: bool


@dataclass(frozen=True, slots=True)
class _Owner:
    """The API key whose request first stored a response under an Idempotency-Key."""

    api_key: str
    body: bytes  # digest of the stored response's body
    source: str


_NOTHING = KeyVerdict((), replayed=False, first_use=False)


class KeyObserver:
    """Judges each request sent with a key against the ones fed before it (module docstring).

    Its tables are LRUs of ``limit`` entries holding digests: a replay or reuse further apart
    than ``limit`` distinct keys is not seen."""

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        idem = profile.idempotency
        self._replay_header = idem.replay_header
        self._retention = float(idem.retention_secs)
        self._reused = idem.reused
        self._in_use = idem.in_use
        self._auth_statuses = profile.auth.statuses
        self._keys: BoundedTable[bytes, _Stored] = BoundedTable(limit)
        # Keys (per API key) whose uses so far were refused with a 4xx, and where the first
        # refusal is: a corrected request may use them again (IDEM-014). And, per
        # Idempotency-Key alone, the API key whose request stored a response under it first:
        # another API key's use of it is a new request (IDEM-015).
        self._refused: BoundedTable[bytes, str] = BoundedTable(limit)
        self._first_owner: BoundedTable[bytes, _Owner] = BoundedTable(limit)

    def __len__(self) -> int:
        """How many keys it holds a stored response under (at most ``limit``)."""
        return len(self._keys)

    def observe(
        self, use: KeyUse, *, expected: int | None = None, new_key: bool = False
    ) -> KeyVerdict:
        """Judge ``use`` and remember what it stored.

        ``expected``: the status of the request's success, given by a caller that sent it
        after every earlier use of its key was answered and knows it valid apart from its
        key: then an in-use answer (or an authentication refusal) is judged too, and a request
        the key's rules make new must get that status. ``new_key``: no request used the key
        before, so an answer marked as a replay marks a first use (IDEM-008)."""
        status = use.status
        if expected is None and status in self._auth_statuses:
            return _NOTHING  # refused before the key was looked at
        scope = key_scope(use.api_key, use.key)
        fingerprint = digest(use.method, use.path, use.query, use.request_body)
        stored = self._keys.get(scope)
        then = stored.at if stored is not None else None
        if then is not None and use.at is not None and use.at - then > self._retention:
            stored = None  # past the retention: a first use again
        accepted = 200 <= status < 300
        if stored is None:
            found = list(self._first_use(use, scope, expected))
            if new_key and accepted and use.marked:
                found.append(
                    Finding(
                        REPLAY,
                        ("IDEM-008",),
                        Outcome.FAILED,
                        f"first use of Idempotency-Key {use.key!r}: answered {status} with "
                        f"{self._replay_header} true, as a replay",
                    )
                )
            if accepted:
                self._keys.put(
                    scope,
                    _Stored(
                        fingerprint,
                        digest(use.method, use.path),
                        status,
                        None if use.missing else digest(use.body),
                        use.at,
                        use.source,
                        not use.marked,
                    ),
                )
            return KeyVerdict(tuple(found), replayed=False, first_use=True)
        first = f"the request of {stored.source or EARLIER}"
        in_use = use.missing is not None or self._in_use.matches(status, use.code)
        if expected is None and status == self._in_use.status and in_use:
            return _NOTHING  # sent while the first was answered: the key was in use
        if stored.fingerprint == fingerprint:
            found = self._replay(use, scope, stored, first, sequential=expected is not None)
            return KeyVerdict(tuple(found), replayed=True, first_use=False)
        return KeyVerdict((self._reuse(use, stored, first),), replayed=False, first_use=False)

    def _replay(
        self, use: KeyUse, scope: bytes, stored: _Stored, first: str, *, sequential: bool
    ) -> list[Finding]:
        """IDEM-007 and IDEM-008 for a request repeating a stored one. ``sequential``: it was
        sent after the stored one was answered, so it cannot be the original execution."""
        found = [_same_answer(use, stored, first)]
        if not self._replay_header:
            found.append(Finding(REPLAY, ("IDEM-008",), Outcome.NOT_EXERCISED, NO_REPLAY_MARKER))
            return found
        if not use.marked and not stored.original_seen and not sequential:
            # the original execution, recorded after a replay that started before it
            self._keys.put(scope, replace(stored, original_seen=True))
            return found
        found.append(
            Finding(
                REPLAY,
                ("IDEM-008",),
                Outcome.PASSED if use.marked else Outcome.FAILED,
                f"replay of {first}: header {self._replay_header} "
                + ("is true" if use.marked else "missing or not true"),
            )
        )
        return found

    def _reuse(self, use: KeyUse, stored: _Stored, first: str) -> Finding:
        """IDEM-010 or IDEM-011 for the key of a stored request with another request."""
        status, reused = use.status, self._reused
        moved = digest(use.method, use.path) != stored.target
        ids = ("IDEM-011",) if moved else ("IDEM-010",)
        what = f"Idempotency-Key {use.key!r} of {first} reused with " + (
            "another method or path" if moved else "another body"
        )
        if use.missing and status == reused.status and reused.code is not None:
            return Finding(
                REPLAY, ids, Outcome.NOT_EXERCISED, f"{what}: got {status}; {use.missing}"
            )
        refused = reused.matches(status, use.code)
        wanted = f"{reused.status} {reused.code or ''}".rstrip()
        return Finding(
            REPLAY,
            ids,
            Outcome.PASSED if refused else Outcome.FAILED,
            f"{what}: got {status}" + ("" if refused else f", expected {wanted}"),
        )

    def _first_use(self, use: KeyUse, scope: bytes, expected: int | None) -> list[Finding]:
        """IDEM-014 and IDEM-015 for a request under a key with no stored response for its API
        key: a key whose earlier uses were refused (4xx), or that another API key used, is
        free, so this request is new; refused as a reuse, it found a response that must not
        have been stored (an error, or another API key's). The order of the uses is enough:
        whatever the timing, only a stored response can make a request a reuse."""
        status, key, missing = use.status, use.key, use.missing
        found: list[Finding] = []
        refusal = 400 <= status < 500
        code = None if missing or not refusal else use.code
        accepted = 200 <= status < 300
        reused = status == self._reused.status and code == self._reused.code
        judged = accepted or reused or expected is not None
        refused = self._refused.get(scope)
        if missing and status == self._reused.status:
            # maybe refused as a reuse: the body that would say so was not captured
            other = self._first_owner.get(digest(key))
            reason = f"Idempotency-Key {key!r} used again: got {status}; {missing}"
            if refused is not None:
                found.append(Finding(REPLAY, ("IDEM-014",), Outcome.NOT_EXERCISED, reason))
            if other is not None and other.api_key != use.api_key:
                found.append(Finding(REPLAY, ("IDEM-015",), Outcome.NOT_EXERCISED, reason))
            return found
        if refused is not None and judged:
            new = not reused and status == (expected or status)
            found.append(
                Finding(
                    REPLAY,
                    ("IDEM-014",),
                    Outcome.PASSED if new else Outcome.FAILED,
                    f"Idempotency-Key {key!r}, refused with a 4xx in {refused or EARLIER}, "
                    "used again: "
                    + _answered(status, code, reused, expected, f"accepted ({status})"),
                )
            )
        elif refusal and not reused and refused is None:
            in_use = status == self._in_use.status and code in (None, self._in_use.code)
            if code is not None and not in_use:
                self._refused.put(scope, use.source)
        if not judged:
            return found
        slot = digest(key)
        other = self._first_owner.get(slot)
        if other is not None and other.api_key == use.api_key:
            return found
        body = None if missing or not accepted else digest(use.body)
        if other is None:
            if body is not None:
                self._first_owner.put(slot, _Owner(use.api_key, body, use.source))
            return found
        # another API key's response under this key: a replay of it, or a refusal as its reuse
        replay = body is not None and replays(
            body, other.body, marked=use.marked, marker_declared=bool(self._replay_header)
        )
        foreign = reused or replay
        new = not foreign and status == (expected or status)
        found.append(
            Finding(
                REPLAY,
                ("IDEM-015",),
                Outcome.PASSED if new else Outcome.FAILED,
                f"Idempotency-Key {key!r}, used by another API key in {other.source or EARLIER}: "
                + (
                    f"answered with that key's request in mind ({status})"
                    if foreign
                    else _answered(
                        status, code, reused, expected, f"a new request for this API key ({status})"
                    )
                ),
            )
        )
        return found


def _answered(status: int, code: str | None, reused: bool, expected: int | None, new: str) -> str:
    """How a request a key's rules make new was answered, for a message (``new``: as one)."""
    if reused:
        return f"refused as a reuse ({status} {code})"
    if expected is not None and status != expected:
        return f"answered {_answer(status, code)}, expected {expected}"
    return new


def _same_answer(use: KeyUse, stored: _Stored, first: str) -> Finding:
    """IDEM-007 for a request that repeats a stored one: the same status and body again."""
    what = f"replay of {first} under Idempotency-Key {use.key!r}"
    status = use.status
    body = None if use.missing else digest(use.body)
    if status == stored.status and (body is None or stored.body is None):
        reason = use.missing or "the recording holds no body of the first response"
        return Finding(REPLAY, ("IDEM-007",), Outcome.NOT_EXERCISED, f"{what}: {reason}")
    if status == stored.status and body == stored.body:
        return Finding(REPLAY, ("IDEM-007",), Outcome.PASSED, f"{what}: same status and body")
    message = f"{what}: got {status} and another body, the stored response was {stored.status}"
    if body is not None and body == stored.body:
        message += " with the same body"
    return Finding(REPLAY, ("IDEM-007",), Outcome.FAILED, message)
