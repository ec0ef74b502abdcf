"""The ``thorough`` marker for the XLA differential runs (defined once, in tests/robustness)."""

from tests.robustness.conftest import pytest_collection_modifyitems, pytest_configure

__all__ = ["pytest_collection_modifyitems", "pytest_configure"]
