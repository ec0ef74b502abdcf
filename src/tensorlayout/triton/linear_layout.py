"""Triton's ``LinearLayout``: a linear map over GF(2) from named input dims to named output dims.

Each input dimension of size ``2**n`` (``register``, ``lane``, ``warp``, ``block`` for
registers; ``offset``, ``block`` for shared memory) is given by its ``n`` *bases*, the
images of ``1, 2, 4, ...``; an input is the XOR of the bases of its set bits (no carries).
Output dimensions (``dim0``, ``dim1``, ...) have power-of-two sizes. Names, arguments, checks
and printed text follow ``triton._C.libtriton.linear_layout.LinearLayout`` (Triton 3.9).

>>> L = LinearLayout.from_bases([("register", [[0, 1], [8, 0]]),
...                              ("lane", [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]])],
...                             ["dim0", "dim1"])
>>> L.apply({"register": 3, "lane": 9})
{'dim0': 10, 'dim1': 3}
>>> L.get_out_dim_size("dim0"), L.is_surjective(), L.is_injective()
(16, True, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorlayout.errors import LayoutError
from tensorlayout.triton import _algebra as alg
from tensorlayout.triton import _batch as batch
from tensorlayout.triton import _gf2
from tensorlayout.triton._bases import (
    MAX_BITS,
    check_bases,
    fast_pack,
    fast_sizes,
    infer_sizes,
    is_int,
    is_pow2,
    log2,
    norm_bases,
    norm_names,
    plain_out_dims,
    sizes_ok,
)
from tensorlayout.triton._dim_methods import DimMethods
from tensorlayout.triton._dims import names_list, same_names
from tensorlayout.triton._packed import fields, pack_dims
from tensorlayout.triton._text import Bases, OutDims, format_layout, parse_layout
from tensorlayout.triton.view import get_distributed_view, get_shared_view

__all__ = ["LinearLayout"]


def _need_layout(x: Any, what: str) -> LinearLayout:
    if not isinstance(x, LinearLayout):
        raise LayoutError(f"{what} needs a LinearLayout, got {type(x).__name__}")
    return x


#: The 1-D layouts built so far (immutable values, so they are shared), keyed by their arguments.
_ONE_D: dict[tuple[Any, ...], LinearLayout] = {}


def _keep(key: tuple[Any, ...], layout: LinearLayout) -> LinearLayout:
    if len(_ONE_D) > 4096:
        _ONE_D.clear()
    _ONE_D[key] = layout
    return layout


@dataclass(frozen=True, slots=True)
class LinearLayout(DimMethods):
    """A linear layout; build one with :meth:`from_bases`, :meth:`parse` or an encoding.

    Stored packed: one int per input bit (the image of that bit, out dims side by side, the first
    one lowest), so applying, composing and solving are XORs of words. Derived facts (rank,
    per-dimension columns) are computed once per value.

    >>> print(LinearLayout.identity_1d(4, "lane", "dim0"))
    <BLANKLINE>
     - lane=1 -> (1)
       lane=2 -> (2)
    where out dims are: [dim0 (size 4)]
    """

    _ins: alg.InDims
    _out_dims: OutDims
    _cols: tuple[int, ...]
    _memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # ----- construction ---------------------------------------------------------------------
    @staticmethod
    def from_bases(bases: Any, out_dim_names: Any, out_dim_sizes: Any = None,
                   require_surjective: bool = True) -> LinearLayout:
        """Triton's ``LinearLayout.from_bases``; sizes are inferred when not given.

        >>> LinearLayout.from_bases([("offset", [[1], [2]])], ["dim0"]).get_out_dim_size("dim0")
        4
        """
        if (type(out_dim_sizes) is list or type(out_dim_sizes) is tuple) and \
                (type(out_dim_names) is list or type(out_dim_names) is tuple):
            out_dims = plain_out_dims(out_dim_names, out_dim_sizes)
            if out_dims is not None:
                fast = fast_pack(bases, out_dims)
                if fast is not None and len(fast[1]) <= MAX_BITS:  # out dims checked just above
                    layout = LinearLayout(fast[0], out_dims, tuple(fast[1]))
                    return layout._surjective_if(True) if require_surjective else layout
        plain = type(out_dim_names) is list or type(out_dim_names) is tuple
        names = tuple(out_dim_names) if plain else ()
        if not plain or set(map(type, names)) - {str} or len(set(names)) != len(names):
            names = norm_names(out_dim_names, "out_dim_names")
        if out_dim_sizes is None:
            if not require_surjective:
                raise LayoutError("out_dim_sizes must be provided when require_surjective is false")
            inferred = fast_sizes(bases, len(names))
            if inferred is None:
                norm = norm_bases(bases)
                return LinearLayout._checked(norm, infer_sizes(norm, names), True)
            out_dim_sizes, require_surjective = inferred, True
        plain = type(out_dim_sizes) is list or type(out_dim_sizes) is tuple
        sizes = tuple(out_dim_sizes) if plain or isinstance(out_dim_sizes, Iterable) else None
        if sizes is None or len(sizes) != len(names):
            raise LayoutError("out_dim_names and out_dim_sizes must have the same length")
        out_dims = tuple(zip(names, sizes))
        fast = fast_pack(bases, out_dims) if sizes_ok(out_dims) else None
        if fast is None:
            return LinearLayout._checked(norm_bases(bases), out_dims, bool(require_surjective))
        return LinearLayout._new(fast[0], out_dims, tuple(fast[1]), bool(require_surjective))

    @staticmethod
    def _checked(bases: Bases, out_dims: OutDims, require_surjective: bool) -> LinearLayout:
        """From normalised bases: Triton's checks (with its messages), then packed."""
        check_bases(bases, out_dims)
        cols = pack_dims([v for _, vs in bases for v in vs], out_dims) or []
        return LinearLayout._new(tuple((n, len(vs)) for n, vs in bases), out_dims, tuple(cols),
                                 require_surjective)

    @staticmethod
    def _new(ins: alg.InDims, out_dims: OutDims, cols: tuple[int, ...],
             require_surjective: bool = False) -> LinearLayout:
        n_out = 0
        if len(out_dims) > 2:
            for _, s in out_dims:
                n_out += s.bit_length() - 1
        if len(cols) > MAX_BITS or n_out > MAX_BITS:
            n_out = sum(s.bit_length() - 1 for _, s in out_dims)
            raise LayoutError(f"layout too large: {len(cols)} in bits and {n_out} out bits "
                              "(Triton allows 64 each)")
        return LinearLayout(ins, out_dims, cols)._surjective_if(require_surjective)

    def _surjective_if(self, required: bool) -> LinearLayout:
        """This layout, checked surjective when ``required`` (Triton's message)."""
        if required and not self.is_surjective():
            raise LayoutError("Layout is expected to be surjective, i.e. every `out` coordinate can be "
                              "reached by some `in` coordinate, but was not:" + str(self))
        return self

    @staticmethod
    def _of(p: alg.Packed) -> LinearLayout:
        return LinearLayout._new(p[0], p[1], p[2])

    def _derive(self, p: alg.Packed) -> LinearLayout:
        return LinearLayout._new(p[0], p[1], p[2])

    @property
    def _packed(self) -> alg.Packed:
        return self._ins, self._out_dims, self._cols

    @staticmethod
    def parse(text: str) -> LinearLayout:
        """Read the text Triton prints (``str(ll)``); errors name line and column.

        >>> LinearLayout.parse(" - lane=1 -> (1)\\nwhere out dims are: [dim0 (size 2)]").apply({"lane": 1})
        {'dim0': 1}
        """
        bases, out_dims = parse_layout(text)
        return LinearLayout.from_bases(bases, [n for n, _ in out_dims], [s for _, s in out_dims],
                                       require_surjective=False)

    @staticmethod
    def empty() -> LinearLayout:
        """The layout with no dimensions at all.

        >>> str(LinearLayout.empty())
        '\\n(empty layout)'
        """
        return _EMPTY

    @staticmethod
    def strided_1d(size: int, stride: int, in_dim: str, out_dim: str) -> LinearLayout:
        """``x -> stride * x`` for ``x < size`` into an out dim of size ``stride * size`` (Triton's
        ``strided1D``; surjective only for stride 1; size 0 is the empty layout).

        >>> LinearLayout.strided_1d(4, 2, "lane", "dim0").apply({"lane": 3})
        {'dim0': 6}
        """
        key = (size, stride, in_dim, out_dim)
        plain = type(size) is int and type(stride) is int and type(in_dim) is str and type(out_dim) is str
        got = _ONE_D.get(key) if plain else None
        if got is not None:
            return got
        if type(size) is int and type(stride) is int and size > 0 and stride > 0 and \
                not size & (size - 1) and not stride & (stride - 1) and type(in_dim) is str and \
                type(out_dim) is str:
            cols = tuple(stride << i for i in range(size.bit_length() - 1))
            return _keep(key, LinearLayout._new(((in_dim, len(cols)),), ((out_dim, stride * size),), cols))
        for x, what in ((size, "size"), (stride, "stride")):
            if not is_int(x) or ((x != 0 or what == "stride") and not is_pow2(x)):
                raise LayoutError(f"strided_1d needs a power-of-two {what}, got {x!r}")
        names_list([in_dim, out_dim], "strided_1d")
        return LinearLayout.empty()

    @staticmethod
    def identity_1d(size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """``in_dim -> out_dim``, the identity on ``size`` (a power of two) elements.

        >>> LinearLayout.identity_1d(8, "offset", "dim1").apply({"offset": 5})
        {'dim1': 5}
        """
        plain = type(size) is int and type(in_dim) is str and type(out_dim) is str
        got = _ONE_D.get((size, 1, in_dim, out_dim)) if plain else None
        if got is not None:
            return got
        if not is_int(size) or (size and not is_pow2(size)):
            raise LayoutError(f"identity_1d needs a power-of-two size (or 0: empty), got {size!r}")
        return LinearLayout.strided_1d(size, 1, in_dim, out_dim)

    @staticmethod
    def zeros_1d(size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> LinearLayout:
        """``size`` inputs that all map to 0 (a broadcast).

        >>> LinearLayout.zeros_1d(4, "warp", "dim0").apply({"warp": 3})
        {'dim0': 0}
        """
        if not is_int(size) or (size and not is_pow2(size)):
            raise LayoutError(f"zeros_1d needs a power-of-two size (or 0: empty), got {size!r}")
        if size == 0:
            names_list([in_dim, out_dim], "zeros_1d")
            return _EMPTY
        if type(in_dim) is str and type(out_dim) is str and sizes_ok(((out_dim, out_dim_size),)):
            key = (size, 0, in_dim, out_dim, out_dim_size)
            return _ONE_D.get(key) or _keep(key, LinearLayout._new(
                ((in_dim, log2(size)),), ((out_dim, out_dim_size),), (0,) * log2(size)))
        return LinearLayout.from_bases([(in_dim, [[0]] * log2(size))], [out_dim], [out_dim_size], False)

    # ----- dimensions -----------------------------------------------------------------------
    @property
    def bases(self) -> list[tuple[str, list[list[int]]]]:
        """``[(in_dim, [[...], ...]), ...]`` as Triton's binding returns it."""
        fs = fields(self._out_dims)
        out, at, cols = [], 0, self._cols
        for name, k in self._ins:
            part = cols[at: at + k]
            at += k
            if len(fs) == 1:
                out.append((name, [[c] for c in part]))
            elif len(fs) == 2:
                m0, (s1, m1) = fs[0][1], fs[1]
                out.append((name, [[c & m0, c >> s1 & m1] for c in part]))
            else:
                out.append((name, [[c >> s & m for s, m in fs] for c in part]))
        return out

    def _per_dim(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        got = self._memo.get("per_dim")
        if got is None:
            at = alg.in_slices(self._ins)
            got = self._memo["per_dim"] = tuple((n, self._cols[a:b]) for n, (a, b) in at.items())
        return got

    def _out_fields(self) -> tuple[tuple[str, int, int], ...]:
        got = self._memo.get("fields")
        if got is None:
            got = self._memo["fields"] = tuple((n, s, m) for (n, _), (s, m) in
                                               zip(self._out_dims, fields(self._out_dims)))
        return got

    @property
    def out_dims(self) -> list[tuple[str, int]]:
        """``[(out_dim, size), ...]``."""
        return list(self._out_dims)

    @property
    def num_in_dims(self) -> int:
        """How many in dims (Triton's ``num_in_dims``)."""
        return len(self._ins)

    @property
    def num_out_dims(self) -> int:
        """How many out dims."""
        return len(self._out_dims)

    def get_in_dim_names(self) -> list[str]:
        """The in dims, in order.

        >>> LinearLayout.identity_1d(2, "lane", "dim0").get_in_dim_names()
        ['lane']
        """
        return [n for n, _ in self._ins]

    def get_out_dim_names(self) -> list[str]:
        """The out dims, in order (the first is the least significant when flattened)."""
        return [n for n, _ in self._out_dims]

    def _in_log(self, name: str) -> int:
        for n, k in self._ins:
            if n == name:
                return k
        raise LayoutError(f"'{name}' is not an in dim of this layout (in dims: {self.get_in_dim_names()})")

    def _out_index(self, name: str) -> int:
        for i, (n, _) in enumerate(self._out_dims):
            if n == name:
                return i
        raise LayoutError(f"'{name}' is not an out dim of this layout (out dims: {self.get_out_dim_names()})")

    def has_in_dim(self, name: str) -> bool:
        """Whether ``name`` is an in dim."""
        return any(n == name for n, _ in self._ins)

    def has_out_dim(self, name: str) -> bool:
        """Whether ``name`` is an out dim."""
        return any(n == name for n, _ in self._out_dims)

    def get_in_dim_size_log2(self, name: str) -> int:
        """The number of bases of in dim ``name``."""
        return self._in_log(name)

    def get_in_dim_size(self, name: str) -> int:
        """``2**(number of bases)`` of in dim ``name``.

        >>> LinearLayout.identity_1d(8, "lane", "dim0").get_in_dim_size("lane")
        8
        """
        for n, k in self._ins:
            if n == name:
                return 1 << k
        return 1 << self._in_log(name)  # raises: no such in dim

    def get_out_dim_size(self, name: str) -> int:
        """The size of out dim ``name`` (a power of two).

        >>> LinearLayout.identity_1d(8, "lane", "dim0").get_out_dim_size("dim0")
        8
        """
        for n, size in self._out_dims:
            if n == name:
                return size
        return self._out_dims[self._out_index(name)][1]  # raises: no such out dim

    def get_out_dim_size_log2(self, name: str) -> int:
        """``log2`` of :meth:`get_out_dim_size`."""
        return log2(self.get_out_dim_size(name))

    def get_out_dim_sizes(self) -> list[int]:
        """The out-dim sizes, in order."""
        return [s for _, s in self._out_dims]

    def get_in_dims(self) -> list[tuple[str, int]]:
        """``[(in_dim, size), ...]`` (Triton's ``getInDims``)."""
        return [(n, 1 << k) for n, k in self._ins]

    def get_total_in_dim_size_log2(self) -> int:
        """All in bits (the number of matrix columns)."""
        return len(self._cols)

    def get_total_out_dim_size_log2(self) -> int:
        """All out bits (the number of matrix rows)."""
        n = 0
        for _, s in self._out_dims:
            n += s.bit_length() - 1
        return n

    def get_total_in_dim_size(self) -> int:
        """The number of inputs (product of in-dim sizes)."""
        return 1 << len(self._cols)

    def get_total_out_dim_size(self) -> int:
        """The number of outputs (product of out-dim sizes).

        >>> LinearLayout.zeros_1d(4, "warp", "dim0", 8).get_total_out_dim_size()
        8
        """
        return 1 << self.get_total_out_dim_size_log2()

    # ----- the map --------------------------------------------------------------------------
    def apply(self, ins: Mapping[str, int]) -> dict[str, int]:
        """XOR of the bases of the set bits of each input (bits past the dim size are ignored).

        >>> LinearLayout.identity_1d(4, "lane", "dim0").apply({"lane": 6})
        {'dim0': 2}
        """
        if type(ins) is not dict or len(ins) != len(self._ins):
            return self._apply_checked(ins)
        cols = self._cols
        acc = j = 0
        for name, k in self._ins:
            x = ins.get(name)
            if type(x) is not int:
                return self._apply_checked(ins)
            end = j + k
            while x and j < end:
                if x & 1:
                    acc ^= cols[j]
                x >>= 1
                j += 1
            j = end
        out = {}
        for name, size in self._out_dims:
            out[name] = acc & (size - 1)
            acc >>= size.bit_length() - 1
        return out

    def _apply_checked(self, ins: Any) -> dict[str, int]:
        """:meth:`apply` for inputs off its fast path: exactly the in dims, each an int."""
        if not isinstance(ins, Mapping) or set(ins) != set(self.get_in_dim_names()):
            got = list(ins) if isinstance(ins, Mapping) else ins
            raise LayoutError(f"apply needs exactly the in dims {self.get_in_dim_names()}, got {got!r}")
        for name in ins:
            if not is_int(ins[name]):
                raise LayoutError(f"input '{name}' must be an int, got {ins[name]!r}")
        return self.apply({n: int(ins[n]) for n, _ in self._ins})

    def apply_batch(self, ins: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """:meth:`apply` on arrays of inputs at once (numpy, broadcast together).

        >>> L = LinearLayout.from_bases([("lane", [[2], [1]])], ["dim0"])
        >>> L.apply_batch({"lane": [0, 1, 2, 3]})["dim0"].tolist()
        [0, 2, 1, 3]
        """
        if not isinstance(ins, Mapping) or set(ins) != set(self.get_in_dim_names()):
            raise LayoutError(f"apply_batch needs exactly the in dims {self.get_in_dim_names()}")
        return batch.apply_batch(self._per_dim(), self._out_fields(), ins)

    def apply_all(self) -> np.ndarray:
        """The outputs of every input, one row each (``int64``, one column per out dim); row ``i``
        is the input whose in dims, flattened in order (the first fastest), give ``i``.

        >>> LinearLayout.from_bases([("lane", [[0, 1], [1, 0]])], ["dim0", "dim1"]).apply_all().tolist()
        [[0, 0], [0, 1], [1, 0], [1, 1]]
        """
        return batch.apply_all(self._cols, self._out_fields())

    def get_matrix_view(self) -> list[list[int]]:
        """The GF(2) matrix: one row per out bit, one column per in bit (Triton's order).

        >>> LinearLayout.from_bases([("lane", [[2], [1]])], ["dim0"]).get_matrix_view()
        [[0, 1], [1, 0]]
        """
        return [[c >> r & 1 for c in self._cols] for r in range(self.get_total_out_dim_size_log2())]

    def _rank(self) -> int:
        got = self._memo.get("rank")
        if got is None:
            got = self._memo["rank"] = _gf2.fast_rank(self._cols)
        return got

    def is_surjective(self) -> bool:
        """Every output is reached (matrix rank == total out bits).

        >>> LinearLayout.zeros_1d(2, "lane", "dim0", 2).is_surjective()
        False
        """
        return self._rank() == self.get_total_out_dim_size_log2()

    def is_injective(self) -> bool:
        """No two inputs collide (matrix rank == total in bits).

        >>> LinearLayout.zeros_1d(2, "lane", "dim0").is_injective()
        False
        """
        return self._rank() == len(self._cols)

    def is_invertible(self) -> bool:
        """Surjective and square.

        >>> LinearLayout.identity_1d(4, "lane", "dim0").is_invertible()
        True
        """
        memo = self._memo
        got = memo.get("invertible")
        if got is None:
            n_out = 0
            for _, s in self._out_dims:
                n_out += s.bit_length() - 1
            got = memo["invertible"] = len(self._cols) == n_out and _gf2.independent(self._cols)
            if got:
                memo["rank"] = n_out
        return got

    # ----- algebra --------------------------------------------------------------------------
    def __mul__(self, outer: LinearLayout) -> LinearLayout:
        """Triton's product: ``self`` is minor; shared dims stack (``outer``'s bases shifted).

        >>> a = LinearLayout.identity_1d(2, "register", "dim1")
        >>> (a * LinearLayout.identity_1d(4, "lane", "dim1")).apply({"register": 1, "lane": 3})
        {'dim1': 7}
        """
        if type(outer) is not LinearLayout:
            _need_layout(outer, "the product of layouts")
        if not outer._ins and not outer._out_dims:
            return self  # the empty layout is the product's identity
        if not self._ins and not self._out_dims:
            return outer
        plan = alg.mul_plan(self._ins, self._out_dims, outer._ins, outer._out_dims)
        cols = alg.mul_cols(plan, self._cols, outer._cols)
        if len(cols) > MAX_BITS or len(plan[1]) > 2:
            return LinearLayout._new(plan[0], plan[1], cols)  # checks Triton's 64-bit limits
        return LinearLayout(plan[0], plan[1], cols)

    def compose(self, outer: LinearLayout) -> LinearLayout:
        """``outer(self(x))``: self's out dims must be outer's in dims, each no larger.

        >>> L = LinearLayout.from_bases([("lane", [[1], [2]])], ["dim0"])
        >>> L.compose(LinearLayout.from_bases([("dim0", [[2], [1]])], ["x"])).apply({"lane": 1})
        {'x': 2}
        """
        if type(outer) is not LinearLayout:
            _need_layout(outer, "compose")
        image = alg.images_in(self._out_dims, outer._ins, outer._cols)
        return LinearLayout(self._ins, outer._out_dims, alg.compose_cols(self._cols, image))

    def invert_and_compose(self, outer: LinearLayout) -> LinearLayout:
        """``C`` with ``outer(C(x)) == self(x)`` (Triton's ``invertAndCompose``); ``outer`` has the
        same out dims (any order), each at least as large. An in dim with the same bases in both
        layouts whose out bits no other in dim touches maps to itself; the rest is the
        least-squares solution with free variables 0.

        >>> L = LinearLayout.from_bases([("lane", [[2], [1]])], ["dim0"])
        >>> S = LinearLayout.from_bases([("offset", [[1], [2], [4]])], ["dim0"])
        >>> L.invert_and_compose(S).apply({"lane": 1})
        {'offset': 2}
        """
        outs = self.get_out_dim_names()
        same_names(outs, _need_layout(outer, "invert_and_compose").get_out_dim_names(), "invert_and_compose")
        return self._of(alg.invert_and_compose(self._packed, outer._packed))

    def pseudoinvert(self) -> LinearLayout:
        """A right inverse of a surjective layout (smallest input for each output).

        >>> LinearLayout.from_bases([("lane", [[1], [1]])], ["dim0"]).pseudoinvert().apply({"dim0": 1})
        {'lane': 1}
        """
        if not self.is_surjective():
            raise LayoutError("pseudoinvert needs a surjective layout")
        identity = tuple((n, s.bit_length() - 1) for n, s in self._out_dims)
        cols = tuple(1 << i for i in range(self.get_total_out_dim_size_log2()))
        return self._of(alg.invert_and_compose((identity, self._out_dims, cols), self._packed))

    def invert(self) -> LinearLayout:
        """The inverse of an invertible (surjective and square) layout.

        >>> LinearLayout.from_bases([("lane", [[2], [1]])], ["dim0"]).invert().apply({"dim0": 1})
        {'lane': 2}
        """
        if not self.is_invertible():
            raise LayoutError("a linear layout must be surjective and square to be invertible")
        return self.pseudoinvert()

    # ----- text -----------------------------------------------------------------------------
    def get_distributed_view(self, use_hw_point_of_view: bool = False) -> str:
        """Which thread and register hold each element (see :mod:`tensorlayout.triton.view`)."""
        return get_distributed_view(self, use_hw_point_of_view)

    def get_shared_view(self, use_hw_point_of_view: bool = False) -> str:
        """Which element each shared-memory offset stores (see :mod:`tensorlayout.triton.view`)."""
        return get_shared_view(self, use_hw_point_of_view)

    def __str__(self) -> str:
        bases = tuple((n, tuple(tuple(v) for v in vs)) for n, vs in self.bases)
        return format_layout(bases, self._out_dims)

    def __repr__(self) -> str:
        return (f"LinearLayout.from_bases({self.bases!r}, {self.get_out_dim_names()!r}, "
                f"{self.get_out_dim_sizes()!r}, require_surjective=False)")


_EMPTY = LinearLayout((), (), ())
