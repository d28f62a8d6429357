"""Tests of the engine: runner, preflight, progress, and behaviour against hostile servers."""
