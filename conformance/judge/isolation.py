"""Tenant isolation (spec 1, profile 5): the requirement a request breaks when it names an id of
another merchant and is not answered as for an unknown id, and the one a list breaks when it
shows another merchant's item. The isolation family probes them; the validator finds them in
recorded traffic.
"""

from __future__ import annotations

FOREIGN_ID: dict[str, str] = {
    "cancelPayment": "TEN-001",
    "acceptUnderpaidPayment": "TEN-001",
    "testDepositPayment": "HELP-009",
    "testExpirePayment": "HELP-009",
    "cancelSubscription": "TEN-002",
    "replacePayoutSchedule": "TEN-003",
    "pausePayoutSchedule": "TEN-003",
    "retirePayoutSchedule": "TEN-003",
    "rotateWebhookEndpointSecret": "TEN-005",
    "resendWebhookDelivery": "TEN-005",
    "settleX402Payment": "TEN-006",
    "reportX402Usage": "TEN-006",
}
FOREIGN_LISTED: dict[str, str] = {
    "listPayments": "TEN-004",
    "listWebhookDeliveries": "TEN-005",
}
