"""Tests of the responses family (conformance/suite/responses/): its proof and its schema
checks."""
