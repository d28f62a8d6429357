"""The lowest layer: contract, profile, requirement catalogue and request signing.

Nothing in ``conformance.core`` imports from another layer of the package.
"""
