"""The schema family: schemathesis phases driven from the effective contract.

``test_schema.py`` runs them; ``loading`` builds the schemathesis configuration, ``generation``
the generation contract, ``fixups`` makes cases safe to send, ``checks`` holds our registered
checks, ``runner`` drives the unit and stateful phases, ``ledger`` and ``requirements`` turn
observations into results, ``evidence`` keeps what an exchange showed. ``rules.yaml`` is the
family's data.
"""

from __future__ import annotations
