"""Tests of the isolation family (conformance/suite/isolation/)."""
