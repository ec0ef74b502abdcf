"""Names of a package loaded on first use: a module ``__getattr__`` and ``__dir__`` over a table;
and :func:`lazy_modules`, a module's accessor of the modules only some of its paths use.

A package's ``__init__`` lists where each public name lives, ``name -> (module, attribute)``
(attribute None: the module itself), and exposes them with :func:`lazy_names`; importing the
package then costs nothing until a name is used, and ``from package import name`` still works.

>>> table = {"Err": ("tensorlayout.errors", "LayoutError")}
>>> getattr_, dir_ = lazy_names("tensorlayout.errors", table, ["Err"])
>>> getattr_("Err").__name__, "Err" in dir_()
('LayoutError', True)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any


def lazy_names(package: str, table: Mapping[str, tuple[str, str | None]], public: Sequence[str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name of ``table`` loads from its
    module on first use and is kept in the package; any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = table[name]
        value = import_module(module) if attr is None else getattr(import_module(module), attr)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__


def lazy_modules(table: Mapping[str, str]) -> Callable[[str], Any]:
    """The accessor ``name -> the module table[name]``, imported on its first use: a module loads
    what only some of its paths need (a command's rarer options) when one of them runs.

    >>> lazy = lazy_modules({"json": "json"})
    >>> lazy("json").dumps([1])
    '[1]'
    """

    def lazy(name: str) -> Any:
        return import_module(table[name])

    return lazy
