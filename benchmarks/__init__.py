"""Benchmarks: ``python -m benchmarks.server`` measures the reference server."""

from __future__ import annotations
