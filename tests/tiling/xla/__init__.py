"""Checks of ``xla_tiling_cases.json`` vectors, one module per group of XLA test files.

Each module exports ``HANDLERS``: ``{kind: check}``, where ``check(vector)`` dispatches on the
vector's calls through its own table and raises on a disagreement with XLA's expectation.
"""
