"""The explorer: one page (served locally, or saved as a self-contained file) that reads any
notation the library reads and shows its views, operations and derivations live.
"""

__all__: list[str] = []
