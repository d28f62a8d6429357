"""Tests of the passive validator: readers, checks, cross-exchange checks, engine."""
