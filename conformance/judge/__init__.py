"""The judgements the suite and the validator share: one answer against the contract, the
profile and its request, and answers against each other, as pure functions over exchanges.

It imports only ``conformance.core``: the suite (which drives traffic) and the validator (which
replays a recording) both ask it, and neither is imported here (``tests/test_layers.py``).
"""
