"""Tests of the schema family (conformance/suite/schema/)."""
