"""Nothing: the `__file__` of a pytest-xdist worker's `__main__` (tests/conftest.py says why)."""
