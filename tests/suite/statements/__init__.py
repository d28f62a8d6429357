"""Tests of the statements family (conformance/suite/statements/)."""
