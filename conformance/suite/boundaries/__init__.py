"""The boundaries family: every constraint of every operation's request, at its edge.

The constraints are read from the effective contract (``judge/constraints.py``, which the
validator reads too), the values around each edge built from a known-valid example
(``near_misses.py``), and each value put in place of ONE field of a known-valid request from the
factories (``requests.py``). The results are reported under the ids
``judge/boundary_requirements.yaml`` maps each constraint to; ``test_boundaries.py`` sends the
cases and judges the answers.
``test_parameters.py`` does the same for every query and path parameter's encoding and every
cursor (``parameters.py``, ``parameter_classes.yaml``).
"""

from __future__ import annotations
