"""The x402 family: payment requirements, settlement of EIP-712-signed payloads, usage.

``test_x402.py`` runs deterministic scenarios (every requirement rule for every deployment of
every profile currency, every rejection rule of settlement once, every usage rule) and a
hypothesis state machine (``machine.py``) over requirements -> settle attempts (valid and
tampered) -> usage, with a model (``model.py``) of which payment is settled with which payload.
Values come from the profile (currencies, deployments, ``x402`` section); payloads are signed by
the suite's test wallet (``Factories.signed_payload``).
"""

from __future__ import annotations
