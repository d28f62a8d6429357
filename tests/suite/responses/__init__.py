"""Tests of the responses family's schema checks (conformance/suite/responses/)."""
