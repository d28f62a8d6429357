"""What the profile says an x402 answer shows (profile 5), as (requirement ids, problem) pairs
(problem None: the rule held).

``X402Rules(profile)`` judges one answer against its own request: issued requirements
(X402-001..006, -009, -010, -029; OPS-030 for a request without ``scheme``; the time of
``valid_before``, X402-008, is ``answers.AnswerChecks``'s, which knows when the request was
handled), an accepted settlement (X402-012), a refused one's reason (X402-022) and an accepted
usage report (X402-025 to X402-027).

``usage_against_payment`` judges a usage answer against the payment's history (its currency's
decimals, the value of its settled authorization) and ``settle_result`` is what the identical
settle request sent again must answer the same (X402-023): ``x402_history`` holds those rules.
``Refusal`` reads an answer against one of the profile's refusals, told apart from its other
answers of the same status by their codes (X402-022 here, X402-024 to X402-026 there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from conformance.core.contract import load_document
from conformance.core.patterns import ecma_search
from conformance.core.profile import Currency, ErrorSpec, Profile
from conformance.core.results import Outcome
from conformance.judge.findings import Finding
from conformance.judge.payment_rules import expected_raw
from conformance.judge.values import digits

Rule = tuple[tuple[str, ...], str | None]
DOMAIN_FIELDS = ("name", "version", "chain_id", "verifying_contract")
UPTO = "upto"  # the scheme ``usage_requires = "settled-upto"`` names


def usage_scheme(profile: Profile) -> str | None:
    """The scheme of the payments that take usage reports (None: none do)."""
    return UPTO if profile.x402.usage_requires == "settled-upto" else None


@lru_cache(maxsize=1)
def default_scheme() -> str | None:
    """The scheme the contract states for requirements that name none (the default of
    ``X402RequirementsCreate.scheme``), None when it states none."""
    schemas = load_document().get("components", {}).get("schemas", {})
    scheme = schemas.get("X402RequirementsCreate", {}).get("properties", {}).get("scheme", {})
    default = scheme.get("default") if isinstance(scheme, dict) else None
    return default if isinstance(default, str) else None


class Reading(Enum):
    """How an answer reads against one of the profile's refusals (``Refusal.reads``)."""

    ACCEPTED = "accepted"
    AS_PROFILE = "refused as the profile says"
    UNNAMED = "refused with its status and no code"
    WRONG_CODE = "refused with its status and another code"
    OTHER_KIND = "refused for another reason"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One of the profile's refusals, told apart by their codes from its other answers with the
    same status (an Idempotency-Key in use, another state conflict...): a refusal with one of
    those codes is of another kind."""

    spec: ErrorSpec
    others: frozenset[str]

    @classmethod
    def of(cls, profile: Profile, spec: ErrorSpec, kin: Sequence[ErrorSpec] = ()) -> Refusal:
        """``kin``: other answers of the profile that are this refusal too, where it pins no
        code of its own (an already settled payment is in an invalid state)."""
        own = {spec.code, None, *(k.code for k in kin if spec.code is None)}
        others = {o.code for o in profile.error_specs if o.status == spec.status} - own
        return cls(spec, frozenset(c for c in others if c is not None))

    @property
    def wanted(self) -> str:
        return f"{self.spec.status}" + (f" {self.spec.code}" if self.spec.code else "")

    def reads(self, status: int, code: str | None) -> Reading:
        if 200 <= status < 300:
            return Reading.ACCEPTED
        if status != self.spec.status or code in self.others:
            return Reading.OTHER_KIND
        if code is None or not code.strip():
            return Reading.UNNAMED
        if self.spec.code is None or code == self.spec.code:
            return Reading.AS_PROFILE
        return Reading.WRONG_CODE

    def verdict(
        self,
        check: str,
        ids: tuple[str, ...],
        status: int,
        code: str | None,
        what: str,
        *,
        known_valid: bool,
    ) -> Finding | None:
        """The answer ``status`` with ``code`` to a request the profile refuses with this.
        ``known_valid``: the request is valid but for that (the suite built it so), so a
        refusal of another kind, or one without the code the profile pins, fails; otherwise
        (a recorded request, whose answer's code may be unknown) they leave no verdict, or
        pass."""
        reading = self.reads(status, code)
        got = f"{status}" + (f" {code}" if code else "")
        if reading is Reading.AS_PROFILE or (
            reading is Reading.UNNAMED and (self.spec.code is None or not known_valid)
        ):
            return Finding(check, ids, Outcome.PASSED, f"{what}: refused ({got})")
        if reading is Reading.OTHER_KIND and not known_valid:
            return None
        how = "accepted" if reading is Reading.ACCEPTED else "answered"
        return Finding(
            check,
            ids,
            Outcome.FAILED,
            f"{what}: {how} {got}, the profile's answer is {self.wanted}",
        )


def settle_result(answer: object) -> tuple[object, object, object] | None:
    """A settlement's result, as the identical request settled again must answer it (X402-023):
    its success, tx_hash and payment_id (None: the answer is no JSON object)."""
    if not isinstance(answer, Mapping):
        return None
    return answer.get("success"), answer.get("tx_hash"), answer.get("payment_id")


def usage_against_payment(
    actual_amount: object, answer: Mapping[str, Any], *, decimals: int, authorised: int
) -> Iterator[Rule]:
    """An accepted usage report of a payment in a currency of ``decimals`` whose settled
    authorization's value is ``authorised``: ``max_raw`` is that value and ``actual_raw`` the
    reported amount in raw units (X402-027); an amount over the value was accepted (X402-026)."""
    actual = expected_raw(actual_amount, decimals)
    if actual is None:
        return
    wrong = [
        f"{name} {answer.get(name)!r}, expected {want!r}"
        for name, want in (("max_raw", str(authorised)), ("actual_raw", str(actual)))
        if answer.get(name) != want
    ]
    yield ("X402-027",), "; ".join(wrong) if wrong else None
    over = f"usage of {actual_amount} ({actual} raw units) over the authorised {authorised}"
    yield ("X402-026",), f"{over} was accepted" if actual > authorised else None


class X402Rules:
    """The profile's x402 choices, read once, and the rules an answer alone decides."""

    def __init__(self, profile: Profile) -> None:
        x402 = profile.x402
        self.offset = x402.valid_before_offset_secs
        self._address = x402.address_pattern
        self._nonce = x402.nonce_pattern
        self._tx_hash = x402.tx_hash_pattern
        self._currencies: dict[str, Currency] = profile.currencies
        self._failure = Refusal.of(profile, x402.settle_failure)
        self._default_scheme = default_scheme()
        self.usage_scheme = usage_scheme(profile)
        self._schemes = frozenset(x402.schemes)

    def requirements(self, field: Callable[[str], Any], accepts: list[Any]) -> Iterator[Rule]:
        """Issued ``accepts`` entries against the request (``field``: a member of its body)."""
        chain_id, currency_id = field("chain_id"), field("currency_id")
        currency = self._currencies.get(currency_id) if isinstance(currency_id, str) else None
        deployed = (
            currency is not None and isinstance(chain_id, str) and chain_id in currency.chains
        )
        if currency is not None and deployed:
            want = currency.chains.count(chain_id)
            count = len(accepts)
            yield ("X402-001",), None if count == want else f"{count} accepts entries, not {want}"
        asked = field("scheme")
        scheme, scheme_id = (
            (asked, "X402-010") if asked is not None else (self._default_scheme, "OPS-030")
        )
        max_raw = expected_raw(field("amount"), currency.decimals) if currency is not None else None
        for index, entry in enumerate(accepts):
            if not isinstance(entry, dict):
                continue
            where = f"accepts[{index}]"
            if isinstance(chain_id, str):
                net = entry.get("network")
                yield (
                    ("X402-002",),
                    None if net == chain_id else f"{where}.network {net!r}, not {chain_id!r}",
                )
            if currency is not None and deployed:
                yield ("X402-003",), self._asset(where, entry.get("asset"), currency, str(chain_id))
            pay_to = entry.get("pay_to")
            yield (
                ("X402-004",),
                None
                if self._is(self._address, pay_to)
                else (f"{where}.pay_to {pay_to!r} is not an address"),
            )
            if max_raw is not None and currency is not None:
                raw = entry.get("max_amount_required")
                yield (
                    ("X402-005",),
                    None
                    if raw == str(max_raw)
                    else (
                        f"{where}.max_amount_required {raw!r} for {field('amount')} "
                        f"{currency.currency_id} ({currency.decimals} decimals): expected {max_raw}"
                    ),
                )
            nonce = entry.get("nonce")
            yield (
                ("X402-006",),
                None
                if self._is(self._nonce, nonce)
                else (f"{where}.nonce {nonce!r} breaks {self._nonce}"),
            )
            yield ("X402-009",), _resource_problem(where, field("resource"), entry.get("resource"))
            if scheme is not None:
                got = entry.get("scheme")
                yield (
                    (scheme_id,),
                    None
                    if got == scheme
                    else (
                        f"{where}.scheme {got!r}, expected {scheme!r}"
                        + ("" if asked is not None else " (the contract's default)")
                    ),
                )
            yield ("X402-029",), self._domain_problem(where, entry.get("extra"))

    def settlement(self, payment_id: object, answer: Mapping[str, Any]) -> Rule:
        """An accepted settlement of ``payment_id``: success true, the profile's tx_hash, the
        payment_id (X402-012)."""
        wrong = []
        if answer.get("success") is not True:
            wrong.append(f"success {answer.get('success')!r}")
        if not self._is(self._tx_hash, answer.get("tx_hash")):
            wrong.append(f"tx_hash {answer.get('tx_hash')!r} breaks {self._tx_hash}")
        if answer.get("payment_id") != payment_id:
            wrong.append(f"payment_id {answer.get('payment_id')!r}, settled {payment_id!r}")
        return ("X402-012",), f"a 2xx settlement with {'; '.join(wrong)}" if wrong else None

    def settle_refusal(self, status: int, code: str | None) -> Rule | None:
        """A settlement refused with the profile's settle failure names its x402 reason as
        ``code``: the profile's code where it pins one, any otherwise (X402-022). None for a
        refusal of another kind."""
        reading = self._failure.reads(status, code)
        if reading in (Reading.ACCEPTED, Reading.OTHER_KIND):
            return None
        if reading is Reading.AS_PROFILE:
            return ("X402-022",), None
        pinned = self._failure.spec.code
        if pinned is not None:
            return ("X402-022",), f"code {code!r}, expected {pinned!r}"
        return ("X402-022",), f"a failed settlement with code {code!r}"

    def usage(
        self, payment_id: str | None, usage_id: object, answer: Mapping[str, Any]
    ) -> Iterator[Rule]:
        """An accepted usage report: its own ``actual_raw`` at most its ``max_raw`` (X402-026),
        the path's payment_id, the requested usage_id and the usage scheme (X402-027); another
        of the profile's schemes shows a payment that takes no usage report (X402-025)."""
        high, actual = answer.get("max_raw"), answer.get("actual_raw")
        if digits(high) and digits(actual):
            yield (
                ("X402-026",),
                (
                    f"actual_raw {actual} above its own max_raw {high} was accepted"
                    if int(actual) > int(high)
                    else None
                ),
            )
        wrong = []
        if payment_id is not None and answer.get("payment_id") != payment_id:
            wrong.append(f"payment_id {answer.get('payment_id')!r} (path {payment_id!r})")
        # a usage_id that is no string breaks the request's contract: accepting it is that
        # failure (SHAPE-031), its echo no other
        if isinstance(usage_id, str) and answer.get("usage_id") != usage_id:
            wrong.append(f"usage_id {answer.get('usage_id')!r} (requested {usage_id!r})")
        scheme = answer.get("scheme")
        if self.usage_scheme is not None and scheme != self.usage_scheme:
            if scheme in self._schemes:  # the payment's own scheme: it takes no usage report
                yield ("X402-025",), f"a usage report of a {scheme} payment was accepted"
            else:
                wrong.append(f"scheme {scheme!r}, not {self.usage_scheme!r}")
        yield ("X402-027",), f"the usage answer has {'; '.join(wrong)}" if wrong else None

    # -- helpers -----------------------------------------------------------------------------
    @staticmethod
    def _is(pattern: str, value: object) -> bool:
        return isinstance(value, str) and ecma_search(pattern, value)

    def _asset(self, where: str, asset: object, currency: Currency, chain_id: str) -> str | None:
        if currency.asset_kinds.get(chain_id) == "native":
            return (
                None if asset == "native" else f"{where}.asset of a native deployment is {asset!r}"
            )
        return (
            None
            if self._is(self._address, asset)
            else f"{where}.asset {asset!r} is not a token address"
        )

    def _domain_problem(self, where: str, extra: object) -> str | None:
        """The EIP-712 domain a payer signs against (X402-029)."""
        if not isinstance(extra, dict):
            return f"{where}.extra is {extra!r}, expected the EIP-712 domain"
        missing = [name for name in DOMAIN_FIELDS if name not in extra]
        if missing:
            return f"{where}.extra lacks {', '.join(missing)}"
        wrong = []
        if not isinstance(extra["name"], str) or not isinstance(extra["version"], str):
            wrong.append("name and version must be strings")
        chain = extra["chain_id"]
        if not isinstance(chain, int) or isinstance(chain, bool):
            wrong.append(f"chain_id {chain!r} is not an integer")
        if not self._is(self._address, extra["verifying_contract"]):
            wrong.append("verifying_contract is not an address")
        return f"{where}.extra: {'; '.join(wrong)}" if wrong else None


def _resource_problem(where: str, asked: object, resource: object) -> str | None:
    """The requested resource, or the server's own absolute URL when none was (X402-009)."""
    if asked is not None:
        return None if resource == asked else f"{where}.resource {resource!r}, not {asked!r}"
    parts = urlsplit(resource) if isinstance(resource, str) else None
    absolute = parts is not None and parts.scheme in ("http", "https") and parts.netloc
    return None if absolute else f"{where}.resource {resource!r} is not an absolute URL"
