from __future__ import annotations

from conformance.cli import main

main()
