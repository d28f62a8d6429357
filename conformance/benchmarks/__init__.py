"""Benchmarks: ``python -m conformance.benchmarks.server`` measures the reference server."""

from __future__ import annotations
