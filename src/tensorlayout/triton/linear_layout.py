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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.errors import LayoutError
from tensorlayout.triton import _gf2
from tensorlayout.triton._bases import (
    check_bases,
    infer_sizes,
    is_int,
    is_pow2,
    log2,
    norm_bases,
    norm_names,
)
from tensorlayout.triton._dims import dim_pairs, names_list, same_names, split_index, supremum
from tensorlayout.triton._text import Bases, OutDims, format_layout, parse_layout
from tensorlayout.triton.view import get_distributed_view, get_shared_view

__all__ = ["LinearLayout"]



def _need_layout(x: Any, what: str) -> LinearLayout:
    if not isinstance(x, LinearLayout):
        raise LayoutError(f"{what} needs a LinearLayout, got {type(x).__name__}")
    return x




@dataclass(frozen=True, slots=True)
class LinearLayout:
    """A linear layout; build one with :meth:`from_bases`, :meth:`parse` or an encoding.

    >>> print(LinearLayout.identity_1d(4, "lane", "dim0"))
    <BLANKLINE>
     - lane=1 -> (1)
       lane=2 -> (2)
    where out dims are: [dim0 (size 4)]
    """

    _bases: Bases
    _out_dims: OutDims

    # ----- construction ---------------------------------------------------------------------
    @staticmethod
    def from_bases(bases: Any, out_dim_names: Any, out_dim_sizes: Any = None,
                   require_surjective: bool = True) -> LinearLayout:
        """Triton's ``LinearLayout.from_bases``; sizes are inferred when not given.

        >>> LinearLayout.from_bases([("offset", [[1], [2]])], ["dim0"]).get_out_dim_size("dim0")
        4
        """
        norm = norm_bases(bases)
        names = norm_names(out_dim_names, "out_dim_names")
        if out_dim_sizes is None:
            if not require_surjective:
                raise LayoutError("out_dim_sizes must be provided when require_surjective is false")
            out_dims = infer_sizes(norm, names)
        else:
            sizes = tuple(out_dim_sizes) if isinstance(out_dim_sizes, Iterable) else None
            if sizes is None or len(sizes) != len(names):
                raise LayoutError("out_dim_names and out_dim_sizes must have the same length")
            out_dims = tuple(zip(names, sizes))
        return LinearLayout._make(norm, out_dims, bool(require_surjective))

    @staticmethod
    def _make(bases: Bases, out_dims: OutDims, require_surjective: bool = False) -> LinearLayout:
        check_bases(bases, out_dims)
        layout = LinearLayout(bases, out_dims)
        if require_surjective and not layout.is_surjective():
            raise LayoutError("Layout is expected to be surjective, i.e. every `out` coordinate can be "
                              "reached by some `in` coordinate, but was not:" + str(layout))
        return layout

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
        return LinearLayout((), ())

    @staticmethod
    def identity_1d(size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """``in_dim -> out_dim``, the identity on ``size`` (a power of two) elements.

        >>> LinearLayout.identity_1d(8, "offset", "dim1").apply({"offset": 5})
        {'dim1': 5}
        """
        if not is_int(size) or not is_pow2(size):
            raise LayoutError(f"identity_1d needs a power-of-two size, got {size!r}")
        bases = ((in_dim, tuple((1 << i,) for i in range(log2(size)))),)
        return LinearLayout._make(bases, ((out_dim, size),))

    @staticmethod
    def zeros_1d(size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> LinearLayout:
        """``size`` inputs that all map to 0 (a broadcast).

        >>> LinearLayout.zeros_1d(4, "warp", "dim0").apply({"warp": 3})
        {'dim0': 0}
        """
        if not is_int(size) or not is_pow2(size):
            raise LayoutError(f"zeros_1d needs a power-of-two size, got {size!r}")
        return LinearLayout._make(((in_dim, ((0,),) * log2(size)),), ((out_dim, out_dim_size),))

    # ----- dimensions -----------------------------------------------------------------------
    @property
    def bases(self) -> list[tuple[str, list[list[int]]]]:
        """``[(in_dim, [[...], ...]), ...]`` as Triton's binding returns it."""
        return [(n, [list(v) for v in vs]) for n, vs in self._bases]

    @property
    def out_dims(self) -> list[tuple[str, int]]:
        """``[(out_dim, size), ...]``."""
        return list(self._out_dims)

    @property
    def num_in_dims(self) -> int:
        """How many in dims (Triton's ``num_in_dims``)."""
        return len(self._bases)

    @property
    def num_out_dims(self) -> int:
        """How many out dims."""
        return len(self._out_dims)

    def get_in_dim_names(self) -> list[str]:
        """The in dims, in order.

        >>> LinearLayout.identity_1d(2, "lane", "dim0").get_in_dim_names()
        ['lane']
        """
        return [n for n, _ in self._bases]

    def get_out_dim_names(self) -> list[str]:
        """The out dims, in order (the first is the least significant when flattened)."""
        return [n for n, _ in self._out_dims]

    def _in_bases(self, name: str) -> tuple[tuple[int, ...], ...]:
        for n, vectors in self._bases:
            if n == name:
                return vectors
        raise LayoutError(f"'{name}' is not an in dim of this layout (in dims: {self.get_in_dim_names()})")

    def _out_index(self, name: str) -> int:
        for i, (n, _) in enumerate(self._out_dims):
            if n == name:
                return i
        raise LayoutError(f"'{name}' is not an out dim of this layout (out dims: {self.get_out_dim_names()})")

    def has_in_dim(self, name: str) -> bool:
        """Whether ``name`` is an in dim."""
        return name in self.get_in_dim_names()

    def has_out_dim(self, name: str) -> bool:
        """Whether ``name`` is an out dim."""
        return name in self.get_out_dim_names()

    def get_in_dim_size_log2(self, name: str) -> int:
        """The number of bases of in dim ``name``."""
        return len(self._in_bases(name))

    def get_in_dim_size(self, name: str) -> int:
        """``2**(number of bases)`` of in dim ``name``.

        >>> LinearLayout.identity_1d(8, "lane", "dim0").get_in_dim_size("lane")
        8
        """
        return 1 << len(self._in_bases(name))

    def get_out_dim_size(self, name: str) -> int:
        """The size of out dim ``name`` (a power of two).

        >>> LinearLayout.identity_1d(8, "lane", "dim0").get_out_dim_size("dim0")
        8
        """
        return self._out_dims[self._out_index(name)][1]

    def get_out_dim_size_log2(self, name: str) -> int:
        """``log2`` of :meth:`get_out_dim_size`."""
        return log2(self.get_out_dim_size(name))

    def get_out_dim_sizes(self) -> list[int]:
        """The out-dim sizes, in order."""
        return [s for _, s in self._out_dims]

    def get_total_in_dim_size_log2(self) -> int:
        """All in bits (the number of matrix columns)."""
        return sum(len(v) for _, v in self._bases)

    def get_total_out_dim_size_log2(self) -> int:
        """All out bits (the number of matrix rows)."""
        return sum(log2(s) for _, s in self._out_dims)

    def get_total_in_dim_size(self) -> int:
        """The number of inputs (product of in-dim sizes)."""
        return 1 << self.get_total_in_dim_size_log2()

    def get_total_out_dim_size(self) -> int:
        """The number of outputs (product of out-dim sizes).

        >>> LinearLayout.zeros_1d(4, "warp", "dim0", 8).get_total_out_dim_size()
        8
        """
        return 1 << self.get_total_out_dim_size_log2()

    def get_basis(self, in_dim: str, i: int, out_dim: str) -> int:
        """The ``out_dim`` component of basis ``i`` (input ``2**i``) of ``in_dim``.

        >>> LinearLayout.from_bases([("lane", [[2], [1]])], ["dim0"]).get_basis("lane", 0, "dim0")
        2
        """
        return self._in_bases(in_dim)[i][self._out_index(out_dim)]

    # ----- the map --------------------------------------------------------------------------
    def apply(self, ins: Mapping[str, int]) -> dict[str, int]:
        """XOR of the bases of the set bits of each input (bits past the dim size are ignored).

        >>> LinearLayout.identity_1d(4, "lane", "dim0").apply({"lane": 6})
        {'dim0': 2}
        """
        if not isinstance(ins, Mapping) or set(ins) != set(self.get_in_dim_names()):
            got = list(ins) if isinstance(ins, Mapping) else ins
            raise LayoutError(f"apply needs exactly the in dims {self.get_in_dim_names()}, got {got!r}")
        out = [0] * len(self._out_dims)
        for name, vectors in self._bases:
            x = ins[name]
            if not is_int(x):
                raise LayoutError(f"input '{name}' must be an int, got {x!r}")
            for i, v in enumerate(vectors):
                if x >> i & 1:
                    out = [a ^ b for a, b in zip(out, v)]
        return {n: o for (n, _), o in zip(self._out_dims, out)}

    def flattened_bases(self, in_dim: str | None = None) -> list[int]:
        """The bases (of ``in_dim``, or of all in dims in order) with the out dims flattened into
        one index, the first out dim fastest (as Triton's ``reshapeOuts`` flattens them).

        >>> LinearLayout.from_bases([("lane", [[0, 1], [1, 0], [2, 0]])], ["dim0", "dim1"]).flattened_bases()
        [4, 1, 2]
        """
        if in_dim is not None:
            return self.sublayout([in_dim], self.get_out_dim_names()).flattened_bases()
        return self._flat_columns()

    def _flat_columns(self) -> list[int]:
        shifts, acc = [], 0
        for _, size in self._out_dims:
            shifts.append(acc)
            acc += log2(size)
        return [sum(x << s for x, s in zip(v, shifts)) for _, vs in self._bases for v in vs]

    def _matrix_rows(self) -> list[int]:
        """Rows = out bits (dim by dim, LSB first); bit ``c`` of a row = in bit ``c``."""
        cols = self._flat_columns()
        return [sum((c >> r & 1) << j for j, c in enumerate(cols))
                for r in range(self.get_total_out_dim_size_log2())]

    def get_matrix_view(self) -> list[list[int]]:
        """The GF(2) matrix: one row per out bit, one column per in bit (Triton's order).

        >>> LinearLayout.from_bases([("lane", [[2], [1]])], ["dim0"]).get_matrix_view()
        [[0, 1], [1, 0]]
        """
        n = self.get_total_in_dim_size_log2()
        return [[row >> c & 1 for c in range(n)] for row in self._matrix_rows()]

    def _rank(self) -> int:
        return _gf2.rank(self._matrix_rows())

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
        return self._rank() == self.get_total_in_dim_size_log2()

    def is_invertible(self) -> bool:
        """Surjective and square.

        >>> LinearLayout.identity_1d(4, "lane", "dim0").is_invertible()
        True
        """
        square = self.get_total_in_dim_size_log2() == self.get_total_out_dim_size_log2()
        return square and self.is_surjective()

    # ----- algebra --------------------------------------------------------------------------
    def transpose_outs(self, names: Sequence[str]) -> LinearLayout:
        """The same map with the out dims reordered to ``names``.

        >>> LinearLayout.identity_1d(2, "lane", "dim0").transpose_outs(["dim0"]).get_out_dim_names()
        ['dim0']
        """
        names = names_list(names, "transpose_outs")
        same_names(names, self.get_out_dim_names(), "transpose_outs")
        perm = [self._out_index(n) for n in names]
        bases = tuple((n, tuple(tuple(v[i] for i in perm) for v in vs)) for n, vs in self._bases)
        return LinearLayout._make(bases, tuple(self._out_dims[i] for i in perm))

    def transpose_ins(self, names: Sequence[str]) -> LinearLayout:
        """The same map with the in dims reordered to ``names``.

        >>> a = LinearLayout.identity_1d(2, "lane", "dim0") * LinearLayout.identity_1d(2, "warp", "dim0")
        >>> a.transpose_ins(["warp", "lane"]).get_in_dim_names()
        ['warp', 'lane']
        """
        names = names_list(names, "transpose_ins")
        same_names(names, self.get_in_dim_names(), "transpose_ins")
        return LinearLayout._make(tuple((n, self._in_bases(n)) for n in names), self._out_dims)

    def sublayout(self, in_dims: Sequence[str], out_dims: Sequence[str]) -> LinearLayout:
        """The restriction to some in dims and some out dims (kept in this layout's order).

        >>> a = LinearLayout.identity_1d(2, "lane", "dim0") * LinearLayout.identity_1d(2, "warp", "dim1")
        >>> a.sublayout(["warp"], ["dim1"]).bases
        [('warp', [[1]])]
        """
        in_dims, out_dims = names_list(in_dims, "sublayout"), names_list(out_dims, "sublayout")
        for n in in_dims:
            self._in_bases(n)
        keep = [i for i, (n, _) in enumerate(self._out_dims) if n in set(out_dims)]
        for n in out_dims:
            self._out_index(n)
        bases = tuple((n, tuple(tuple(v[i] for i in keep) for v in vs))
                      for n, vs in self._bases if n in set(in_dims))
        return LinearLayout._make(bases, tuple(self._out_dims[i] for i in keep))

    def reshape_ins(self, new_in_dims: Sequence[tuple[str, int]]) -> LinearLayout:
        """Flatten the in dims (in order) and split them into ``new_in_dims`` (same total size).

        >>> LinearLayout.identity_1d(4, "offset", "dim0").reshape_ins([("a", 2), ("b", 2)]).bases
        [('a', [[1]]), ('b', [[2]])]
        """
        new_in_dims = dim_pairs(new_in_dims, "reshape_ins")
        flat = [v for _, vs in self._bases for v in vs]
        sizes = [s for _, s in new_in_dims]
        if not all(is_int(s) and is_pow2(s) for s in sizes) or sum(map(log2, sizes)) != len(flat):
            raise LayoutError(f"reshape_ins to {list(new_in_dims)} does not keep the total in size "
                              f"{self.get_total_in_dim_size()}")
        bases, i = [], 0
        for name, size in new_in_dims:
            bases.append((name, tuple(flat[i: i + log2(size)])))
            i += log2(size)
        return LinearLayout._make(tuple(bases), self._out_dims)

    def reshape_outs(self, new_out_dims: Sequence[tuple[str, int]]) -> LinearLayout:
        """Flatten the out dims (first one minor) and split them into ``new_out_dims``.

        >>> LinearLayout.identity_1d(4, "offset", "dim0").reshape_outs([("r", 2), ("c", 2)]).bases
        [('offset', [[1, 0], [0, 1]])]
        """
        new_out_dims = dim_pairs(new_out_dims, "reshape_outs")
        sizes = [s for _, s in new_out_dims]
        if not all(is_int(s) and is_pow2(s) for s in sizes) or \
                sum(map(log2, sizes)) != self.get_total_out_dim_size_log2():
            raise LayoutError(f"reshape_outs to {list(new_out_dims)} does not keep the total out size "
                              f"{self.get_total_out_dim_size()}")
        cols = iter(self._flat_columns())
        bases = tuple((n, tuple(split_index(next(cols), sizes) for _ in vs)) for n, vs in self._bases)
        return LinearLayout._make(bases, tuple(new_out_dims))

    def __mul__(self, outer: LinearLayout) -> LinearLayout:
        """Triton's product: ``self`` is minor; shared dims stack (``outer``'s bases shifted).

        >>> a = LinearLayout.identity_1d(2, "register", "dim1")
        >>> (a * LinearLayout.identity_1d(4, "lane", "dim1")).apply({"register": 1, "lane": 3})
        {'dim1': 7}
        """
        _need_layout(outer, "the product of layouts")
        for a, b, what in ((self.get_out_dim_names(), outer.get_out_dim_names(), "out"),
                           (self.get_in_dim_names(), outer.get_in_dim_names(), "in")):
            if [n for n in a if n in b] != [n for n in b if n in a]:
                raise LayoutError(f"{what} dims common to both layouts must appear in the same "
                                  f"relative order: {a} and {b}")
        ins = supremum(self.get_in_dim_names(), outer.get_in_dim_names())
        outs = supremum(self.get_out_dim_names(), outer.get_out_dim_names())
        out_log = {n: _log_or0(self, outer, n) for n in outs}
        bases = []
        for name in ins:
            vectors = [_padded(self, name, v, outs, 0) for v in _bases_or_none(self, name)]
            vectors += [_padded(outer, name, v, outs, 1, self) for v in _bases_or_none(outer, name)]
            bases.append((name, tuple(vectors)))
        return LinearLayout._make(tuple(bases), tuple((n, 1 << out_log[n]) for n in outs))

    def compose(self, outer: LinearLayout) -> LinearLayout:
        """``outer(self(x))``: self's out dims must be outer's in dims, each no larger.

        >>> L = LinearLayout.from_bases([("lane", [[1], [2]])], ["dim0"])
        >>> L.compose(LinearLayout.from_bases([("dim0", [[2], [1]])], ["x"])).apply({"lane": 1})
        {'x': 2}
        """
        same_names(self.get_out_dim_names(), _need_layout(outer, "compose").get_in_dim_names(), "compose")
        for name, size in self._out_dims:
            if size > outer.get_in_dim_size(name):
                raise LayoutError(f"compose: out dim '{name}' (size {size}) is larger than the outer "
                                  f"layout's in dim (size {outer.get_in_dim_size(name)})")
        names = self.get_out_dim_names()
        bases = tuple((n, tuple(tuple(outer.apply(dict(zip(names, v))).values()) for v in vs))
                      for n, vs in self._bases)
        return LinearLayout._make(bases, outer._out_dims)

    def invert_and_compose(self, outer: LinearLayout) -> LinearLayout:
        """``C`` with ``outer(C(x)) == self(x)`` (Triton's ``invertAndCompose``): an in dim with the
        same bases in both layouts whose out bits no other in dim touches maps to itself; the rest
        is the least-squares solution with free variables 0.

        >>> L = LinearLayout.from_bases([("lane", [[2], [1]])], ["dim0"])
        >>> S = LinearLayout.from_bases([("offset", [[1], [2]])], ["dim0"])
        >>> L.invert_and_compose(S).apply({"lane": 1})
        {'offset': 2}
        """
        outs = self.get_out_dim_names()
        same_names(outs, _need_layout(outer, "invert_and_compose").get_out_dim_names(), "invert_and_compose")
        a = outer.transpose_outs(outs)
        if a._out_dims != self._out_dims:
            raise LayoutError("invert_and_compose: both layouts must have the same out-dim sizes "
                              f"({self.out_dims} vs {outer.out_dims})")
        if not a.is_surjective():
            raise LayoutError("invert_and_compose needs a surjective outer layout")
        same = [n for n in a.get_in_dim_names() if _maps_to_itself(n, a, self)]
        a_rest = [n for n in a.get_in_dim_names() if n not in same]
        b_rest = [n for n in self.get_in_dim_names() if n not in same]
        ret = _lstsq(a.sublayout(a_rest, outs), self.sublayout(b_rest, outs))
        for n in same:
            ret = ret * LinearLayout.identity_1d(a.get_in_dim_size(n), n, n)
        return ret.transpose_ins(self.get_in_dim_names()).transpose_outs(a.get_in_dim_names())

    def pseudoinvert(self) -> LinearLayout:
        """A right inverse of a surjective layout (smallest input for each output).

        >>> LinearLayout.from_bases([("lane", [[1], [1]])], ["dim0"]).pseudoinvert().apply({"dim0": 1})
        {'lane': 1}
        """
        if not self.is_surjective():
            raise LayoutError("pseudoinvert needs a surjective layout")
        identity = LinearLayout.empty()
        for name, size in self._out_dims:
            identity = identity * LinearLayout.identity_1d(size, name, name)
        return identity.invert_and_compose(self)

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
        return format_layout(self._bases, self._out_dims)

    def __repr__(self) -> str:
        return (f"LinearLayout.from_bases({self.bases!r}, {self.get_out_dim_names()!r}, "
                f"{self.get_out_dim_sizes()!r}, require_surjective=False)")


def _bits(layout: LinearLayout, names: Iterable[str]) -> int:
    """The out bits any basis of the in dims ``names`` sets (flattened, first out dim minor)."""
    mask = 0
    for n in names:
        for c in layout.flattened_bases(n):
            mask |= c
    return mask


def _maps_to_itself(name: str, a: LinearLayout, b: LinearLayout) -> bool:
    """Triton 3.9's broadcasting heuristic: ``name`` has equal bases in ``a`` and ``b`` and, in
    each, no other in dim sets any out bit it sets (found by probing Triton 3.9)."""
    if not b.has_in_dim(name) or a._in_bases(name) != b._in_bases(name):
        return False
    own = _bits(a, [name])
    return all(not own & _bits(x, [n for n in x.get_in_dim_names() if n != name]) for x in (a, b))


def _bases_or_none(layout: LinearLayout, name: str) -> tuple[tuple[int, ...], ...]:
    return layout._in_bases(name) if layout.has_in_dim(name) else ()


def _log_or0(inner: LinearLayout, outer: LinearLayout, name: str) -> int:
    return sum(x.get_out_dim_size_log2(name) for x in (inner, outer) if x.has_out_dim(name))


def _padded(layout: LinearLayout, in_dim: str, v: tuple[int, ...], outs: list[str], is_outer: int,
            inner: LinearLayout | None = None) -> tuple[int, ...]:
    """A basis of ``layout`` over the product's out dims; an outer basis shifts past the inner."""
    names = layout.get_out_dim_names()
    row = []
    for n in outs:
        x = v[names.index(n)] if n in names else 0
        if is_outer and inner is not None and inner.has_out_dim(n):
            x <<= inner.get_out_dim_size_log2(n)
        row.append(x)
    return tuple(row)


def _lstsq(a: LinearLayout, b: LinearLayout) -> LinearLayout:
    """X with ``a(X(y)) == b(y)``, free variables 0 (the RREF of ``[a | b]``); maps b's ins to a's."""
    n_a = a.get_total_in_dim_size_log2()
    n_b = b.get_total_in_dim_size_log2()
    rows = [ra | rb << n_a for ra, rb in zip(a._matrix_rows(), b._matrix_rows())]
    solution = [0] * n_a
    for row in _gf2.rref(rows):
        if not row:
            continue
        pivot = _gf2.lowest_bit(row)
        if pivot >= n_a:
            raise LayoutError("invert_and_compose: the image of the inner layout is not inside the "
                              "image of the outer layout")
        solution[pivot] = row >> n_a
    flat = tuple((sum((solution[r] >> c & 1) << r for r in range(n_a)),) for c in range(n_b))
    in_name = "_flat"
    one = LinearLayout._make(((in_name, flat),), (("_flat", 1 << n_a),))
    return one.reshape_ins([(n, b.get_in_dim_size(n)) for n in b.get_in_dim_names()]).reshape_outs(
        [(n, a.get_in_dim_size(n)) for n in a.get_in_dim_names()])
