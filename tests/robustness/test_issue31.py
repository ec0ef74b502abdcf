"""Issue 31's smaller items: builtins under ``import *``, typed errors for wrong argument types,
sub-tile padding XLA's ArraySize does not count."""

from __future__ import annotations

import builtins

from tensorlayout import cute


def test_star_import_of_cute_leaves_the_builtins_alone() -> None:
    namespace: dict[str, object] = {}
    exec("from tensorlayout.cute import *", namespace)
    for name in cute.BUILTIN_NAMES:
        assert name not in namespace and hasattr(builtins, name)
        assert callable(getattr(cute, name))  # still there as cute.<name>
    assert not set(cute.__all__) & (set(dir(builtins)) - {"_"})  # doctest runs set builtins._
    assert cute.sum((2, (3, 4))) == 9 and str(cute.filter(cute.Layout.parse("(2,3):(0,1)"))) == "3:1"
