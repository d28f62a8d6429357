"""The statements family: ledger statements recomputed with exact decimals (profile 5, 6).

``model`` parses statement pages into exact values (``decimal.Decimal`` amounts, RFC 3339
instants as exact epoch seconds), ``book`` keeps what the suite itself deposited, ``audit``
walks a window page by page and checks it against the lines the suite knows, and
``test_statements`` drives it all: a hypothesis state machine of deposits and window reads,
plus scenarios for refusals, split income and replayed deposits.
"""
