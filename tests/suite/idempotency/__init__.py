"""Tests of the idempotency family (conformance/suite/test_idempotency.py)."""
