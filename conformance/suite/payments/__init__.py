"""The payments family: payments over time, as the profile's section 5 and 6 describe them.

A hypothesis state machine (``machine.py``) keeps a model of the merchant's payments
(``book.py``) and compares it with what the server says, call after call: creates with
generated quotes in every currency of the profile, splits and order numbers; lists with filters,
small limits and a walk of every page (``listing.py``); cancel, accept-underpaid, the deposit
and expire test helpers; replays of creates and cancels that must change nothing. Deterministic
scenarios (``scenarios.py``) cover what a machine adds nothing to: every transition from every
state, the create refusals, the helpers' authentication and unknown ids, foreign cursors.

Every value comes from the profile (``rules.py``): states, transitions, currencies and their
decimals, deployments, list limits, the expires_in_secs range, error statuses and codes.
"""

from __future__ import annotations
