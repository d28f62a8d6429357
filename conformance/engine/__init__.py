"""The engine: runs the suite in-process and folds its checks into a ``RunResult``.

``runner.run_suite`` is the entry point; ``preflight`` proves a target can be tested and
``progress`` shows a run as it goes.
"""

from __future__ import annotations
