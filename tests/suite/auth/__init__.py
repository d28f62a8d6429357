"""Tests of the auth family (conformance/suite/test_auth.py)."""
