"""Tenant isolation (profile 1, profile 4): what one merchant can see and do with another's ids.

With the profile's second credential, every operation that names one of the first merchant's
ids (cancel and accept-underpaid of a payment, the test helpers, cancel of a subscription,
replace, pause and retire of a payout schedule, rotate-secret of an endpoint, resend of a
delivery, x402 settle and usage) gets the answer of an unknown id, and a re-read as the first
merchant shows that nothing changed (the payment list, the next allowed transition, the
endpoint list). No list, statement or delivery list of the second merchant shows the first
one's objects, whatever the filters; the scopes that are per merchant (order numbers, endpoint
ids) let the second merchant reuse the first one's values for objects of its own.

- ``model``: what the suite created as which merchant, and the state it must be in.
- ``requests``: the request of each operation, built from the profile and the contract.
- ``views``: reading as a merchant (lists, statements) and finding foreign objects in them.
- ``machine``: the ``RuleBasedStateMachine`` (create as one merchant, probe as the other) and
  the tour that calls each of its rules once.
- ``scenarios``: webhook scopes, statements and the profile's credentials.
"""
