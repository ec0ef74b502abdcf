"""The methods of ``LinearLayout`` that rearrange, resize, rename, join or divide its dimensions,
and the queries about its bases and dimensions (free variables, consecutive elements, acting
trivially), in Triton's names spelled the Python way. A mixin of
:class:`~tensorlayout.triton.LinearLayout`, which supplies the packed value and its constructor.

>>> from tensorlayout.triton import LinearLayout
>>> LinearLayout.identity_1d(4, "offset", "dim0").flatten_outs().get_out_dim_names()
['dim0']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from tensorlayout.errors import LayoutError
from tensorlayout.triton import _algebra as alg
from tensorlayout.triton import _gf2
from tensorlayout.triton._bases import is_int, is_pow2, log2
from tensorlayout.triton._dims import dim_pairs, names_list, same_names
from tensorlayout.triton._packed import fields, mover, unpack
from tensorlayout.triton._text import OutDims

__all__ = ["DimMethods"]

T = TypeVar("T", bound="DimMethods")


def _same_kind(a: Any, b: Any, what: str) -> Any:
    if type(b) is not type(a):
        raise LayoutError(f"{what} needs a {type(a).__name__}, got {type(b).__name__}")
    return b


def _pow2_size(size: Any, what: str) -> int:
    if not is_int(size) or not is_pow2(size):
        raise LayoutError(f"{what} needs a power-of-two size, got {size!r}")
    return int(size)


class DimMethods:
    """Dimension methods over the packed value ``(_ins, _out_dims, _cols)``."""

    __slots__ = ()

    if TYPE_CHECKING:
        _ins: alg.InDims
        _out_dims: OutDims
        _cols: tuple[int, ...]

        @property
        def _packed(self) -> alg.Packed: ...

        def _in_log(self, name: str) -> int: ...

        def _out_index(self, name: str) -> int: ...

        def get_in_dim_names(self) -> list[str]: ...

        def get_out_dim_names(self) -> list[str]: ...

        def get_total_out_dim_size_log2(self) -> int: ...

        def _per_dim(self) -> tuple[tuple[str, tuple[int, ...]], ...]: ...

        def has_in_dim(self, name: str) -> bool: ...

        def has_out_dim(self, name: str) -> bool: ...

        def get_in_dim_size(self, name: str) -> int: ...

        def get_out_dim_size(self, name: str) -> int: ...

        def _out_fields(self) -> tuple[tuple[str, int, int], ...]: ...

    def _derive(self: T, p: alg.Packed) -> T:
        """A layout of this class from a packed value (checked for Triton's 64-bit limits)."""
        raise NotImplementedError  # provided by LinearLayout

    def transpose_outs(self: T, names: Sequence[str]) -> T:
        """The same map with the out dims reordered to ``names``.

        >>> from tensorlayout.triton import LinearLayout
        >>> LinearLayout.identity_1d(2, "lane", "dim0").transpose_outs(["dim0"]).get_out_dim_names()
        ['dim0']
        """
        if type(names) is list or type(names) is tuple:
            cur = [d[0] for d in self._out_dims]
            if list(names) == cur:
                return self
            try:
                ok = len(names) == len(cur) and set(names) == set(cur)
            except TypeError:
                ok = False
            if ok:
                return self._derive(alg.transpose_outs(self._packed, names))
        names = names_list(names, "transpose_outs")
        same_names(names, self.get_out_dim_names(), "transpose_outs")
        return self._derive(alg.transpose_outs(self._packed, names))

    def transpose_ins(self: T, names: Sequence[str]) -> T:
        """The same map with the in dims reordered to ``names``.

        >>> from tensorlayout.triton import LinearLayout
        >>> a = LinearLayout.identity_1d(2, "lane", "dim0") * LinearLayout.identity_1d(2, "warp", "dim0")
        >>> a.transpose_ins(["warp", "lane"]).get_in_dim_names()
        ['warp', 'lane']
        """
        names = names_list(names, "transpose_ins")
        same_names(names, self.get_in_dim_names(), "transpose_ins")
        per = dict(self._per_dim())
        k = dict(self._ins)
        return self._derive((tuple((n, k[n]) for n in names), self._out_dims,
                             tuple(c for n in names for c in per[n])))

    def sublayout(self: T, in_dims: Sequence[str], out_dims: Sequence[str]) -> T:
        """The restriction to some in dims and some out dims (kept in this layout's order).

        >>> from tensorlayout.triton import LinearLayout
        >>> a = LinearLayout.identity_1d(2, "lane", "dim0") * LinearLayout.identity_1d(2, "warp", "dim1")
        >>> a.sublayout(["warp"], ["dim1"]).bases
        [('warp', [[1]])]
        """
        in_dims, out_dims = names_list(in_dims, "sublayout"), names_list(out_dims, "sublayout")
        for n in in_dims:
            self._in_log(n)
        for n in out_dims:
            self._out_index(n)
        return self._derive(alg.sublayout(self._packed, in_dims, out_dims))

    def reshape_ins(self: T, new_in_dims: Sequence[tuple[str, int]]) -> T:
        """Flatten the in dims (in order) and split them into ``new_in_dims`` (same total size).

        >>> from tensorlayout.triton import LinearLayout
        >>> LinearLayout.identity_1d(4, "offset", "dim0").reshape_ins([("a", 2), ("b", 2)]).bases
        [('a', [[1]]), ('b', [[2]])]
        """
        new_in_dims = dim_pairs(new_in_dims, "reshape_ins")
        sizes = [s for _, s in new_in_dims]
        if not all(is_pow2(s) for s in sizes) or sum(map(log2, sizes)) != len(self._cols):
            raise LayoutError(f"reshape_ins to {list(new_in_dims)} does not keep the total in size "
                              f"{1 << len(self._cols)}")
        if len({n for n, _ in new_in_dims}) != len(new_in_dims):
            raise LayoutError(f"reshape_ins: in-dim names must be distinct, got {list(new_in_dims)}")
        return self._derive((tuple((n, log2(s)) for n, s in new_in_dims), self._out_dims, self._cols))

    def reshape_outs(self: T, new_out_dims: Sequence[tuple[str, int]]) -> T:
        """Flatten the out dims (first one minor) and split them into ``new_out_dims``.

        >>> from tensorlayout.triton import LinearLayout
        >>> LinearLayout.identity_1d(4, "offset", "dim0").reshape_outs([("r", 2), ("c", 2)]).bases
        [('offset', [[1, 0], [0, 1]])]
        """
        new_out_dims = dim_pairs(new_out_dims, "reshape_outs")
        sizes = [s for _, s in new_out_dims]
        if not all(is_pow2(s) for s in sizes) or \
                sum(map(log2, sizes)) != self.get_total_out_dim_size_log2():
            raise LayoutError(f"reshape_outs to {list(new_out_dims)} does not keep the total out size "
                              f"{1 << self.get_total_out_dim_size_log2()}")
        if len({n for n, _ in new_out_dims}) != len(new_out_dims):
            raise LayoutError(f"reshape_outs: out-dim names must be distinct, got {list(new_out_dims)}")
        return self._derive((self._ins, tuple(new_out_dims), self._cols))

    def flatten_ins(self: T) -> T:
        """One in dim, named after the first, holding every input bit.

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.identity_1d(2, "a", "x") * LinearLayout.identity_1d(2, "b", "y")
        >>> ll.flatten_ins().bases
        [('a', [[1, 0], [0, 1]])]
        """
        if not self._ins:
            return self
        return self.reshape_ins([(self._ins[0][0], 1 << len(self._cols))])

    def flatten_outs(self: T) -> T:
        """One out dim, named after the first, the others above it."""
        if not self._out_dims:
            return self
        return self.reshape_outs([(self._out_dims[0][0], 1 << self.get_total_out_dim_size_log2())])

    def resize_in_dim(self: T, in_dim: str, new_size: int) -> T:
        """Shrinking drops the most significant bases of ``in_dim``; growing appends zero bases.

        >>> from tensorlayout.triton import LinearLayout
        >>> LinearLayout.identity_1d(4, "lane", "dim0").resize_in_dim("lane", 8).bases
        [('lane', [[1], [2], [0]])]
        """
        k = self._in_log(in_dim)
        new = log2(_pow2_size(new_size, "resize_in_dim"))
        at = alg.in_slices(self._ins)[in_dim]
        cols = self._cols[: at[0] + min(k, new)] + (0,) * max(0, new - k) + self._cols[at[1]:]
        ins = tuple((n, new if n == in_dim else b) for n, b in self._ins)
        return self._derive((ins, self._out_dims, cols))

    def resize_out_dim(self: T, out_dim: str, new_size: int) -> T:
        """Shrink ``out_dim`` to ``new_size``; a basis value at or above it becomes 0 (Triton's rule).

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.from_bases([("lane", [[1], [6]])], ["dim0"], [8], False)
        >>> ll.resize_out_dim("dim0", 4).bases
        [('lane', [[1], [0]])]
        """
        i = self._out_index(out_dim)
        if _pow2_size(new_size, "resize_out_dim") > self._out_dims[i][1]:
            raise LayoutError(f"resize_out_dim can only shrink '{out_dim}' (size {self._out_dims[i][1]}), "
                              f"not grow it to {new_size}")
        shift, mask = fields(self._out_dims)[i]
        cols = tuple(c & ~(mask << shift) if (c >> shift & mask) >= new_size else c for c in self._cols)
        outs = tuple((n, new_size if j == i else s) for j, (n, s) in enumerate(self._out_dims))
        return self._derive((self._ins, outs, tuple(mover(self._out_dims, outs)(cols))))

    def _clip_outs(self: T, sizes: Sequence[int], drop: str | None) -> T:
        """Each out dim shrunk to its entry of ``sizes`` (powers of two, none larger): a basis of in
        dim ``drop`` with a value at or past a new size goes, any other such value becomes 0 (the
        bases Triton's ``ensureLayoutNotLargerThan`` keeps).

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.from_bases([("register", [[1], [4]]), ("lane", [[6]])], ["x"], [8], False)
        >>> ll._clip_outs([4], "register").bases
        [('register', [[1]]), ('lane', [[0]])]
        """
        outs = tuple((n, s) for (n, _), s in zip(self._out_dims, sizes))
        clip = [(mask & -s) << shift for (shift, mask), s in zip(fields(self._out_dims), sizes)]
        wipe = [(hi, mask << shift) for hi, (shift, mask) in zip(clip, fields(self._out_dims)) if hi]
        high = sum(hi for hi, _ in wipe)
        ins, cols, at = [], [], 0
        for name, k in self._ins:
            kept = 0
            for c in self._cols[at: at + k]:
                if c & high:
                    if name == drop:
                        continue
                    for hi, field_bits in wipe:
                        if c & hi:
                            c &= ~field_bits
                cols.append(c)
                kept += 1
            ins.append((name, kept))
            at += k
        return self._derive((tuple(ins), outs, tuple(mover(self._out_dims, outs)(cols))))

    def rename_in_dim(self: T, old: str, new: str) -> T:
        """The same layout with in dim ``old`` called ``new`` (in the same place).

        >>> from tensorlayout.triton import LinearLayout
        >>> LinearLayout.identity_1d(2, "lane", "dim0").rename_in_dim("lane", "x").get_in_dim_names()
        ['x']
        """
        self._in_log(old)
        names = names_list([old, new], "rename_in_dim")
        if new != old and new in self.get_in_dim_names():
            raise LayoutError(f"rename_in_dim: '{new}' is already an in dim")
        return self._derive((tuple((names[1] if n == old else n, k) for n, k in self._ins),
                             self._out_dims, self._cols))

    def concat_ins(self: T, other: Any) -> T:
        """Both layouts' in dims side by side (this layout's first); same out dims and sizes.

        >>> from tensorlayout.triton import LinearLayout
        >>> a = LinearLayout.identity_1d(2, "lane", "dim0")
        >>> a.concat_ins(a.rename_in_dim("lane", "warp")).bases
        [('lane', [[1]]), ('warp', [[1]])]
        """
        if not isinstance(other, DimMethods) or other._out_dims != self._out_dims:
            raise LayoutError("concat_ins needs a layout with the same out dims and sizes")
        if set(self.get_in_dim_names()) & set(other.get_in_dim_names()):
            raise LayoutError("concat_ins needs layouts with different in dims")
        return self._derive((self._ins + other._ins, self._out_dims, self._cols + other._cols))

    def concat_outs(self: T, other: Any) -> T:
        """Both layouts' out dims side by side (this layout's first); same in dims and sizes.

        >>> from tensorlayout.triton import LinearLayout
        >>> a = LinearLayout.identity_1d(2, "lane", "x")
        >>> a.concat_outs(LinearLayout.zeros_1d(2, "lane", "y")).bases
        [('lane', [[1, 0]])]
        """
        if not isinstance(other, DimMethods) or other._ins != self._ins:
            raise LayoutError("concat_outs needs a layout with the same in dims and sizes")
        if set(self.get_out_dim_names()) & set(other.get_out_dim_names()):
            raise LayoutError("concat_outs needs layouts with different out dims")
        shift = self.get_total_out_dim_size_log2()
        return self._derive((self._ins, self._out_dims + other._out_dims,
                             tuple(a | b << shift for a, b in zip(self._cols, other._cols))))

    def squeeze_ins(self: T, dim: str) -> T:
        """Drop the in dim ``dim`` of size 1.

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.from_bases([("a", []), ("b", [[1]])], ["x"])
        >>> ll.squeeze_ins("a").get_in_dim_names()
        ['b']
        """
        if self._in_log(dim):
            raise LayoutError(f"squeeze_ins: in dim '{dim}' has size {1 << self._in_log(dim)}, not 1")
        return self._derive((tuple(d for d in self._ins if d[0] != dim), self._out_dims, self._cols))

    def squeeze_outs(self: T, dim: str) -> T:
        """Drop the out dim ``dim`` of size 1."""
        size = self._out_dims[self._out_index(dim)][1]
        if size != 1:
            raise LayoutError(f"squeeze_outs: out dim '{dim}' has size {size}, not 1")
        return self._derive((self._ins, tuple(d for d in self._out_dims if d[0] != dim), self._cols))

    def remove_zero_bases_along_dim(self: T, dim: str) -> T:
        """Drop the zero bases of in dim ``dim`` (its broadcast bits); other dims are unchanged.

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.from_bases([("lane", [[0], [1]])], ["x"])
        >>> ll.remove_zero_bases_along_dim("lane").bases
        [('lane', [[1]])]
        """
        ins, cols = [], []
        for name, cs in self._per_dim():
            kept = [c for c in cs if c] if name == dim else list(cs)
            ins.append((name, len(kept)))
            cols += kept
        return self._derive((tuple(ins), self._out_dims, tuple(cols)))

    def equal_ignoring_out_dim_sizes(self, other: Any) -> bool:
        """Same out-dim names (in order) and the same bases, whatever the out-dim sizes.

        >>> from tensorlayout.triton import LinearLayout
        >>> a = LinearLayout.identity_1d(2, "lane", "x")
        >>> a.equal_ignoring_out_dim_sizes(a.reshape_outs([("x", 2)]))
        True
        """
        if not isinstance(other, DimMethods) or self.get_out_dim_names() != other.get_out_dim_names():
            return False
        return self._ins == other._ins and all(
            unpack(a, self._out_dims) == unpack(b, other._out_dims) for a, b in zip(self._cols, other._cols))

    def get_num_consecutive_in_out(self) -> int:
        """How many consecutive values of the first in dim map to consecutive values of the first out
        dim (Triton's ``getNumConsecutiveInOut``).

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.from_bases([("register", [[1], [2], [8]]), ("lane", [[4]])], ["x"])
        >>> ll.get_num_consecutive_in_out()
        4
        """
        if not self._ins or not self._out_dims:
            return 1
        first = self._per_dim()[0][1]
        mask = fields(self._out_dims)[0][1]
        consec = 0
        while consec < len(first) and first[consec] == 1 << consec and 1 << consec <= mask:
            consec += 1
        other = 0
        for j, c in enumerate(self._cols):
            if j >= consec or j >= len(first):
                other |= c & mask
        zeros = (other & -other).bit_length() - 1 if other else 31
        return 1 << min(consec, zeros)

    def contiguous_elems_along_output_dim(self, out_dim: str) -> int:
        """The largest ``n`` such that the layout's image, projected on ``out_dim``, holds ``0..n-1``.

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.from_bases([("lane", [[1, 0], [4, 1]])], ["x", "y"], [8, 2], False)
        >>> ll.contiguous_elems_along_output_dim("x")
        2
        """
        shift, mask = fields(self._out_dims)[self._out_index(out_dim)]
        pivots, _ = _gf2.echelon([c >> shift & mask for c in self._cols])
        n = 0
        while 1 << n <= mask and _gf2.solve(pivots, 1 << n) is not None:
            n += 1
        return 1 << n

    def get_free_variable_masks(self) -> dict[str, int]:
        """Per in dim, the bits that can change without changing the output (the columns that
        depend on earlier ones: Triton's free variables).

        >>> from tensorlayout.triton import LinearLayout
        >>> LinearLayout.from_bases([("lane", [[1], [1], [2]])], ["dim0"]).get_free_variable_masks()
        {'lane': 2}
        """
        _, basic = _gf2.echelon(self._cols)
        free = ~basic & ((1 << len(self._cols)) - 1)
        return {n: free >> a & ((1 << (b - a)) - 1) for n, (a, b) in alg.in_slices(self._ins).items()}

    def is_trivial_over(self, dims: Sequence[str]) -> bool:
        """Whether the layout is the identity on ``dims`` (each both an in and an out dim, same size)
        and keeps them apart from every other dim (Triton's ``isTrivialOver``).

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.identity_1d(4, "a", "a") * LinearLayout.identity_1d(2, "b", "x")
        >>> ll.is_trivial_over(["a"]), ll.is_trivial_over(["c"])
        (True, False)
        """
        dims = names_list(dims, "is_trivial_over")
        if not all(self.has_in_dim(d) or self.has_out_dim(d) for d in dims):
            return False
        for d in dims:
            if not (self.has_in_dim(d) and self.has_out_dim(d)):
                raise LayoutError(f"is_trivial_over: '{d}' must be both an in dim and an out dim "
                                  "(Triton aborts: dimensions must be a subset)")
        if any(self.get_in_dim_size(d) != self.get_out_dim_size(d) for d in dims):
            return False
        square = alg.sublayout(self._packed, dims, dims)[2]
        rest_in = [n for n in self.get_in_dim_names() if n not in dims]
        rest_out = [n for n in self.get_out_dim_names() if n not in dims]
        return square == tuple(1 << i for i in range(len(square))) and \
            not any(alg.sublayout(self._packed, rest_in, dims)[2]) and \
            not any(alg.sublayout(self._packed, dims, rest_out)[2])

    def quotient(self: T, dims: Sequence[str]) -> T | None:
        """The layout on the other dims when it :meth:`is_trivial_over` ``dims``, else None.

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.identity_1d(4, "a", "a") * LinearLayout.identity_1d(2, "b", "x")
        >>> ll.quotient(["a"]).bases
        [('b', [[1]])]
        """
        if not self.is_trivial_over(dims):
            return None
        return self.sublayout([n for n in self.get_in_dim_names() if n not in dims],
                              [n for n in self.get_out_dim_names() if n not in dims])

    def get_basis(self, in_dim: str, i: int, out_dim: str) -> int:
        """The ``out_dim`` component of basis ``i`` (input ``2**i``) of ``in_dim``.

        >>> from tensorlayout.triton import LinearLayout
        >>> LinearLayout.from_bases([("lane", [[2], [1]])], ["dim0"]).get_basis("lane", 0, "dim0")
        2
        """
        self._in_log(in_dim)
        cols = dict(self._per_dim())[in_dim]
        if not is_int(i) or not 0 <= i < len(cols):
            raise LayoutError(f"in dim '{in_dim}' has {len(cols)} bases; there is no basis {i!r}")
        _, shift, mask = self._out_fields()[self._out_index(out_dim)]
        return cols[i] >> shift & mask

    def flattened_bases(self, in_dim: str | None = None) -> list[int]:
        """The bases (of ``in_dim``, or of all in dims in order) with the out dims flattened into
        one index, the first out dim fastest (as Triton's ``reshapeOuts`` flattens them).

        >>> from tensorlayout.triton import LinearLayout
        >>> ll = LinearLayout.from_bases([("lane", [[0, 1], [1, 0], [2, 0]])], ["dim0", "dim1"])
        >>> ll.flattened_bases()
        [4, 1, 2]
        """
        if in_dim is None:
            return list(self._cols)
        self._in_log(in_dim)
        return list(dict(self._per_dim())[in_dim])

    def divide_left(self: T, b: T) -> T | None:
        """``C`` with ``b * C == self`` (Triton's ``divideLeft``), or None when there is none.

        >>> from tensorlayout.triton import LinearLayout
        >>> a = LinearLayout.identity_1d(8, "lane", "dim0")
        >>> a.divide_left(LinearLayout.identity_1d(2, "lane", "dim0")).bases
        [('lane', [[1], [2]])]
        """
        c = alg.divide(self._packed, _same_kind(self, b, "divide_left")._packed, left=True)
        return None if c is None or self._derive(alg.mul(b._packed, c)) != self else self._derive(c)

    def divide_right(self: T, b: T) -> T | None:
        """``C`` with ``C * b == self`` (Triton's ``divideRight``), or None when there is none.

        >>> from tensorlayout.triton import LinearLayout
        >>> a = LinearLayout.identity_1d(8, "lane", "dim0")
        >>> a.divide_right(LinearLayout.identity_1d(2, "lane", "dim0")).bases
        [('lane', [[1], [2]])]
        """
        c = alg.divide(self._packed, _same_kind(self, b, "divide_right")._packed, left=False)
        return None if c is None or self._derive(alg.mul(c, b._packed)) != self else self._derive(c)
