"""Schemathesis hooks for the comparison: plain ``schemathesis run`` signs like the suite.

    SCHEMATHESIS_HOOKS=benchmarks.compare_hooks schemathesis run ...

Importing this module registers the hook globally, for every schemathesis call in the process:
import ``compare_signing`` instead to use the hook's parts.
"""

from __future__ import annotations

import schemathesis

from benchmarks.compare_signing import before_call

schemathesis.hook(before_call)
