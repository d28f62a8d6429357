"""Tests of the boundaries family (conformance/suite/boundaries/) and of
the factories whose valid requests it varies."""
