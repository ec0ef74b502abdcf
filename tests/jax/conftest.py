"""``programs.py`` is a script the differential tests run in a subprocess, not a test module:
never import it at collection (it needs jax)."""

collect_ignore = ["programs.py"]
