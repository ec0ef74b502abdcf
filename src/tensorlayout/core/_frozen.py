"""Immutable value classes that cost nothing to create: :class:`Frozen`, the base of the small
values every command loads (digits, tiles, element types). A frozen dataclass writes its methods
as text and compiles them with ``exec`` when its module loads (about half a millisecond a class,
at every start-up); these are written once, here.

A subclass names its fields in ``__match_args__`` (as a dataclass does) and sets each once in its
own ``__init__`` with :data:`set_field` (``object.__setattr__``, what a frozen dataclass's
``__init__`` uses); it gets equality and hashing on the fields (a dataclass's: same class, same
field tuple), a dataclass's repr, pickling and copying, and any later assignment refused with
:class:`dataclasses.FrozenInstanceError`.

>>> class Pair(Frozen):
...     __slots__ = __match_args__ = ("a", "b")
...     def __init__(self, a: int, b: int) -> None:
...         set_field(self, "a", a)
...         set_field(self, "b", b)
>>> Pair(1, 2), Pair(1, 2) == Pair(1, 2), hash(Pair(1, 2)) == hash((1, 2))
(Pair(a=1, b=2), True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError
from operator import attrgetter
from typing import Any, ClassVar

__all__ = ["Frozen", "set_field"]

#: Sets a field of a :class:`Frozen` value in its ``__init__`` (the only place a field is set).
set_field = object.__setattr__


class Frozen:
    """Base of an immutable value whose fields are ``__match_args__`` (module doc)."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    #: the field tuple of a value (made per subclass from its ``__match_args__``)
    _fields_of: ClassVar[Callable[[Any], tuple[Any, ...]]] = staticmethod(lambda value: ())

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = cls.__match_args__
        if len(names) == 1:
            get = attrgetter(names[0])
            cls._fields_of = staticmethod(lambda value: (get(value),))
        elif names:
            cls._fields_of = staticmethod(attrgetter(*names))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self.__class__._fields_of(self) == self.__class__._fields_of(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.__class__._fields_of(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{self.__class__.__qualname__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return self.__class__, self.__class__._fields_of(self)

