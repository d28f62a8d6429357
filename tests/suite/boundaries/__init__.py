"""Tests of the boundaries family (conformance/suite/boundaries.py, test_boundaries.py) and of
the factories whose valid requests it varies."""
