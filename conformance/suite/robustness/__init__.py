"""The robustness family: malformed requests to every operation, unknown and unversioned paths.

``variants`` builds the malformed requests from each operation's valid one; ``test_robustness``
sends them and judges the answers.
"""

from __future__ import annotations
