"""LinearLayout algebra on packed layouts ``(in dims, out dims, columns)`` (see :mod:`._packed`):
in dims are ``(name, number of bits)``, out dims ``(name, size)``, one column per input bit.

Every function returns a packed triple; the checks that raise Triton's preconditions as typed
errors are here too, so :class:`~tensorlayout.triton.LinearLayout` only wraps them.

>>> ident = ((("lane", 2),), (("dim0", 4),), (1, 2))
>>> mul(ident, ((("lane", 1),), (("dim0", 2),), (1,)))
((('lane', 3),), (('dim0', 8),), (1, 2, 4))
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorlayout.errors import LayoutError
from tensorlayout.triton import _gf2
from tensorlayout.triton._dims import same_names, supremum
from tensorlayout.triton._packed import Mover, fields, mover
from tensorlayout.triton._text import OutDims

__all__ = ["InDims", "Packed", "compose_cols", "images_in", "in_slices", "invert_and_compose", "mul",
           "sublayout", "transpose_outs"]

InDims = tuple[tuple[str, int], ...]
Packed = tuple[InDims, OutDims, tuple[int, ...]]


def in_slices(ins: InDims) -> dict[str, tuple[int, int]]:
    """``{in dim: (first column, end column)}``."""
    out, at = {}, 0
    for name, k in ins:
        out[name] = (at, at + k)
        at += k
    return out


def _out_log(outs: OutDims) -> dict[str, int]:
    return {n: s.bit_length() - 1 for n, s in outs}


def transpose_outs(p: Packed, names: Sequence[str]) -> Packed:
    """The out dims reordered to ``names`` (a permutation of them)."""
    ins, outs, cols = p
    sizes = dict(outs)
    new = tuple((n, sizes[n]) for n in names)
    if new == outs:
        return p
    return ins, new, tuple(mover(outs, new)(cols))


def sublayout(p: Packed, in_names: Sequence[str], out_names: Sequence[str]) -> Packed:
    """Only these in dims and out dims, in the layout's own order."""
    ins, outs, cols = p
    keep_in, keep_out = set(in_names), set(out_names)
    new_outs = tuple(d for d in outs if d[0] in keep_out)
    if len(keep_in) == len(ins) and all(n in keep_in for n, _ in ins):
        return ins, new_outs, (cols if new_outs == outs else tuple(mover(outs, new_outs)(cols)))
    move = mover(outs, new_outs)
    new_ins, new_cols, at = [], [], 0
    for name, k in ins:
        if name in keep_in:
            new_ins.append((name, k))
            new_cols += move(cols[at: at + k])
        at += k
    return tuple(new_ins), new_outs, tuple(new_cols)


def _sup(a: list[str], b: list[str], what: str) -> list[str]:
    """The supremum of two dim lists whose common dims are in the same relative order."""
    if a != b and set(a) & set(b):
        common = set(a) & set(b)
        if [n for n in a if n in common] != [n for n in b if n in common]:
            raise LayoutError(f"{what} dims common to both layouts must appear in the same relative order: "
                              f"{a} and {b}")
    return supremum(a, b)


#: A product's result dims and, per result in dim, the column slices of inner and outer and the
#: functions moving their fields (None: unchanged).
MulPlan = tuple[InDims, OutDims, list[tuple[int, int, Mover | None, int, int, Mover | None]]]
_PLANS: dict[tuple[InDims, OutDims, InDims, OutDims], MulPlan] = {}


def _mul_plan(i_ins: InDims, i_outs: OutDims, o_ins: InDims, o_outs: OutDims) -> MulPlan:
    i_log, o_log = _out_log(i_outs), _out_log(o_outs)
    out_names = _sup(list(i_log), list(o_log), "out")
    in_names = _sup([n for n, _ in i_ins], [n for n, _ in o_ins], "in")
    outs = tuple((n, 1 << (i_log.get(n, 0) + o_log.get(n, 0))) for n in out_names)
    move_i, move_o = mover(i_outs, outs), mover(o_outs, outs, i_log)
    i_at, o_at = in_slices(i_ins), in_slices(o_ins)
    ins, steps = [], []
    for name in in_names:
        a, b = i_at.get(name, (0, 0))
        c, d = o_at.get(name, (0, 0))
        ins.append((name, b - a + d - c))
        steps.append((a, b, None if move_i is list else move_i, c, d, None if move_o is list else move_o))
    return tuple(ins), outs, steps


def mul_plan(i_ins: InDims, i_outs: OutDims, o_ins: InDims, o_outs: OutDims) -> MulPlan:
    """The plan of the product of layouts with these dims (kept per dims)."""
    key = (i_ins, i_outs, o_ins, o_outs)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        plan = _PLANS[key] = _mul_plan(*key)
    return plan


def mul_cols(plan: MulPlan, i_cols: tuple[int, ...], o_cols: tuple[int, ...]) -> tuple[int, ...]:
    """The product's columns following ``plan``."""
    cols: list[int] = []
    for a, b, move_i, c, d, move_o in plan[2]:
        cols += i_cols[a:b] if move_i is None else move_i(i_cols[a:b])
        cols += o_cols[c:d] if move_o is None else move_o(o_cols[c:d])
    return tuple(cols)


def mul(inner: Packed, outer: Packed) -> Packed:
    """Triton's product: ``inner`` minor; a shared out dim stacks ``outer`` above ``inner``."""
    plan = mul_plan(inner[0], inner[1], outer[0], outer[1])
    return plan[0], plan[1], mul_cols(plan, inner[2], outer[2])


def images_in(outs: OutDims, o_ins: InDims, o_cols: tuple[int, ...]) -> Sequence[int]:
    """The image under an outer layout (in dims ``o_ins``, columns ``o_cols``) of each bit of
    ``outs``, each out dim read as the outer in dim of its name (``compose``'s checks).

    >>> images_in((("a", 2), ("b", 2)), (("b", 1), ("a", 1)), (5, 6))
    [6, 5]
    """
    if len(outs) == len(o_ins):  # the same dims in the same order and sizes: the columns as they are
        for (name, size), (o_name, k) in zip(outs, o_ins):
            if name != o_name or size.bit_length() - 1 != k:
                break
        else:
            return o_cols
    at = in_slices(o_ins)
    image: list[int] = []
    for name, size in outs:
        got = at.get(name)
        if got is None or len(at) != len(outs):
            same_names([n for n, _ in outs], [n for n, _ in o_ins], "compose")
            raise LayoutError(f"compose: out dim '{name}' is not an in dim of the outer layout")
        k = size.bit_length() - 1
        if k > got[1] - got[0]:
            raise LayoutError(f"compose: out dim '{name}' (size {size}) is larger than the outer "
                              f"layout's in dim (size {1 << (got[1] - got[0])})")
        image += o_cols[got[0]: got[0] + k]
    return image


def compose_cols(cols: tuple[int, ...], image: Sequence[int]) -> tuple[int, ...]:
    """Each column with its bit ``i`` replaced by ``image[i]`` (XOR of the images of its bits).

    >>> compose_cols((1, 3), [6, 5])
    (6, 3)
    """
    out = []
    for c in cols:
        acc = i = 0
        while c:
            if c & 1:
                acc ^= image[i]
            c >>= 1
            i += 1
        out.append(acc)
    return tuple(out)


def _own_bits(p: Packed, name: str, others: bool) -> int:
    """The out bits the columns of in dim ``name`` (or of every other in dim) set."""
    mask = at = 0
    for n, k in p[0]:
        if (n != name) == others:
            for c in p[2][at: at + k]:
                mask |= c
        at += k
    return mask


def _cols_of(p: Packed, name: str) -> tuple[int, ...]:
    at = 0
    for n, k in p[0]:
        if n == name:
            return p[2][at: at + k]
        at += k
    return ()


def _maps_to_itself(name: str, a: Packed, b: Packed) -> bool:
    """Triton 3.9's broadcasting heuristic: ``name`` has equal bases in ``a`` and ``b`` (``b``'s out
    fields no wider) and, in each, no other in dim sets an out bit it sets (found by probing
    Triton 3.9)."""
    if list(_cols_of(a, name)) != mover(b[1], a[1])(_cols_of(b, name)):
        return False
    return all(not _own_bits(x, name, False) & _own_bits(x, name, True) for x in (a, b))


def _values(p: Packed, name: str) -> list[tuple[int, ...]]:
    fs = fields(p[1])
    return [tuple(c >> s & m for s, m in fs) for c in _cols_of(p, name)]


def lstsq(a: Packed, b: Packed) -> Packed:
    """X with ``a(X(y)) == b(y)``, free variables 0; ``b``'s out fields no wider than ``a``'s. In dims
    are ``b``'s, out dims ``a``'s in dims."""
    pivots, _ = _gf2.echelon(a[2])
    cols = []
    for t in mover(b[1], a[1])(b[2]):
        combo = 0
        while t:
            hit = pivots.get(t & -t)
            if hit is None:
                raise LayoutError("invert_and_compose: the image of the inner layout is not inside the image "
                                  "of the outer layout")
            t ^= hit[0]
            combo ^= hit[1]
        cols.append(combo)
    return b[0], tuple((n, 1 << k) for n, k in a[0]), tuple(cols)


def invert_and_compose(inner: Packed, outer: Packed) -> Packed:
    """C with ``outer(C(x)) == inner(x)`` (Triton's ``invertAndCompose``); the out dims of ``outer``
    are those of ``inner`` (any order), each at least as large."""
    names = [n for n, _ in inner[1]]
    a = transpose_outs(outer, names)
    for (n, s_b), (_, s_a) in zip(inner[1], a[1]):
        if s_a < s_b:
            raise LayoutError(f"invert_and_compose: out dim '{n}' of the outer layout (size {s_a}) is "
                              f"smaller than the inner layout's (size {s_b})")
    b_names = {n for n, _ in inner[0]}
    same = [n for n, _ in a[0] if n in b_names and _maps_to_itself(n, a, inner)]
    if not same:
        return lstsq(a, inner)
    a_rest = [n for n, _ in a[0] if n not in same]
    b_rest = [n for n, _ in inner[0] if n not in same]
    ret = lstsq(sublayout(a, a_rest, names), sublayout(inner, b_rest, names))
    for n in same:
        k = dict(a[0])[n]
        ret = mul(ret, (((n, k),), ((n, 1 << k),), tuple(1 << i for i in range(k))))
    return _order(ret, [n for n, _ in inner[0]], [n for n, _ in a[0]])


def _order(p: Packed, in_names: list[str], out_names: list[str]) -> Packed:
    at = in_slices(p[0])
    k = dict(p[0])
    ins = tuple((n, k[n]) for n in in_names)
    cols = tuple(c for n in in_names for c in p[2][at[n][0]: at[n][1]])
    return transpose_outs((ins, p[1], cols), out_names)


def _vectors(p: Packed) -> dict[str, list[tuple[int, ...]]]:
    return {n: _values(p, n) for n, _ in p[0]}


def divide(a: Packed, b: Packed, left: bool) -> Packed | None:
    """Triton's ``divideLeft`` (``b * C == a``) or ``divideRight`` (``C * b == a``) candidate ``C``,
    with ``a``'s dims, or None when its checks fail (the caller verifies the product)."""
    a_outs, b_outs = dict(a[1]), dict(b[1])
    if not set(dict(b[0])) <= set(dict(a[0])) or not set(b_outs) <= set(a_outs):
        return None
    if any(a_outs[n] < s for n, s in b_outs.items()):
        return None
    c_outs = tuple((n, s // b_outs.get(n, 1)) for n, s in a[1])
    names, b_names = [n for n, _ in a[1]], [n for n, _ in b[1]]
    av, bv = _vectors(a), _vectors(b)
    c_vecs = []
    for name, k in a[0]:
        kb = dict(b[0]).get(name, 0)
        if kb > k:
            return None
        ours, theirs = (av[name][:kb], av[name][kb:]) if left else (av[name][k - kb:], av[name][:k - kb])
        scale = [b_outs.get(n, 1) if left else dict(c_outs)[n] for n in names]
        want = [tuple(v[b_names.index(n)] if n in b_outs else 0 for n in names) for v in bv.get(name, [])]
        if left and ours != [tuple(w) for w in want]:
            return None
        if not left and [tuple(x // f for x, f in zip(v, scale)) for v in ours] != want:
            return None
        kept = theirs
        if any(x % f for v in (kept if left else ours) for x, f in zip(v, scale)):
            return None
        c_vecs.append((name, [tuple(x // f for x, f in zip(v, scale)) for v in kept] if left else kept))
    if any(x >= s for _, vs in c_vecs for v in vs for x, (_, s) in zip(v, c_outs)):
        return None
    fs = fields(c_outs)
    cols = tuple(sum(x << sh for x, (sh, _) in zip(v, fs)) for _, vs in c_vecs for v in vs)
    return tuple((n, len(vs)) for n, vs in c_vecs), c_outs, cols
