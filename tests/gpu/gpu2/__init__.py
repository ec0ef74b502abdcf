"""Checks of ``gpu2_cases.json`` records, one module per group of families.

Each module exports ``HANDLERS``: ``{(family, kind): check}``, where ``check(record)`` raises on a
disagreement with the reference. ``tests/gpu/test_gpu2_conformance.py`` merges the tables.
"""
