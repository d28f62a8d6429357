"""The responses family: every operation's success response reached and checked against its
schema (``schemas`` validates; ``test_responses`` reaches each success through the factories).
"""

from __future__ import annotations
