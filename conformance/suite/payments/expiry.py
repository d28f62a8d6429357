"""PAY-STATE-010: a pending payment becomes expired by itself once its expires_at has passed.

Nothing makes time pass faster: a payment created with the profile's shortest lifetime when the
family starts (``conftest.py``) is looked at by the session's last test, when the rest of the
run has been its waiting time. That test waits for whatever of the lifetime is left, however
fast the rest of the run was, so that what a run exercises does not depend on the seed or the
server's speed; only the run's budget (``run --max-duration``) can leave it not exercised.
A server that expires its payments a little late (a sweep every few seconds) is given
``LATE_SECS`` more before the payment still listed as pending is a failure. Under
pytest-xdist that test may run on another worker than the family's first test: the payment is
handed over in a file named for the run.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conformance.judge.payment_rules import PaymentRules
from conformance.suite.factories import Factories
from conformance.suite.tool_errors import PrerequisiteError

EXPIRY_TEST = "test_a_payment_expires_by_itself"
TOLERANCE_SECS = 2.0  # the suite's and the server's clocks, and the create's round trip
LATE_SECS = 15.0  # how much later than that the server may still show the payment pending
POLL_SECS = 1.0


@dataclass(frozen=True)
class ExpiringPayment:
    """A payment created with the shortest lifetime, or why there is none."""

    order_no: str = ""
    lifetime: int = 0
    created: float = 0.0  # time.time() before the create was sent
    problem: str = ""

    @property
    def remaining(self) -> float:
        """Seconds until its expires_at has surely passed (negative: it has)."""
        return self.due - time.time()

    @property
    def due(self) -> float:
        """When (epoch seconds) its expires_at has surely passed."""
        return self.created + self.lifetime + TOLERANCE_SECS

    @property
    def overdue(self) -> float:
        """When (epoch seconds) a server that has not expired it yet is late."""
        return self.due + LATE_SECS


def budget_problem(payment: ExpiringPayment, deadline: float | None) -> str | None:
    """Why the run's budget leaves no time to watch the payment expire (None: it does)."""
    if deadline is None or payment.due <= deadline:
        return None
    return (
        f"needs {payment.lifetime} s of waiting after a payment is created; the run's time "
        f"budget ends {max(0.0, deadline - payment.created):.0f} s after it"
    )


def create_expiring(
    factories: Factories, rules: PaymentRules, handover: Path | None
) -> ExpiringPayment:
    """The run's expiring payment: the one another worker made, or a new one."""
    if handover is not None and handover.is_file():
        try:
            return ExpiringPayment(**json.loads(handover.read_text(encoding="utf-8")))
        except (ValueError, TypeError):
            pass
    lifetime = rules.expires_in.min
    order_no = factories.unique("pay-expiring-")
    created = time.time()
    try:
        factories.create_payment(merchant_order_no=order_no, expires_in_secs=lifetime)
    except PrerequisiteError as exc:
        return ExpiringPayment(problem=str(exc))
    payment = ExpiringPayment(order_no, lifetime, created)
    if handover is not None:
        scratch = handover.with_suffix(f".{os.getpid()}")
        scratch.write_text(json.dumps(asdict(payment)), encoding="utf-8")
        os.replace(scratch, handover)
    return payment


def handover_file(workerinput: dict[str, Any] | None) -> Path | None:
    """Where xdist workers of one run share the payment (None outside xdist)."""
    run = (workerinput or {}).get("testrunuid")
    if not run:
        return None
    return Path(tempfile.gettempdir()) / f"payment-conformance-expiring-{run}.json"
