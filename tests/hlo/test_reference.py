"""Indexing maps checked against semantics: a numpy evaluator finds what each output reads.

For random shapes (hypothesis), each op is evaluated on positive inputs; perturbing one
operand element at a time shows which outputs depend on it. The computed output→input maps,
enumerated over their domains (runtime variables set from the concrete index operands, with
HLO's clamping), must give exactly those elements.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlayout.hlo import parse_module
from tensorlayout.hlo.analysis import input_to_output_indexing, output_to_input_indexing
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.reference import evaluate, reads

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def shape_text(dims: tuple[int, ...], layout: tuple[int, ...] | None = None, ty: str = "f32") -> str:
    text = f"{ty}[{','.join(map(str, dims))}]"
    if layout is not None:
        text += "{" + ",".join(map(str, layout)) + "}"
    return text


def module(params: list[str], root: str) -> HloInstruction:
    lines = [f"  p{i} = {s} parameter({i})" for i, s in enumerate(params)]
    text = "HloModule m\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n" \
           "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n" + "\n".join(lines) + f"\n  ROOT r = {root}\n}}\n"
    return parse_module(text).entry.root


def operand_values(instr: HloInstruction, rng: np.random.Generator,
                   ints: dict[int, np.ndarray] | None = None) -> list[np.ndarray]:
    vals = []
    for k, op in enumerate(instr.operands):
        if ints and k in ints:
            vals.append(ints[k])
        else:
            vals.append(rng.uniform(1.0, 2.0, size=tuple(op.shape.dimensions)))
    return vals


def _shape_of(instr: HloInstruction, output_id: int) -> tuple[int, ...]:
    shape = instr.shape.tuple_shapes[output_id] if instr.shape.is_tuple else instr.shape
    return tuple(shape.dimensions)


def map_reads(instr: HloInstruction, k: int, values: list[np.ndarray], *, clip: bool = False,
              output_id: int = 0) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """What the computed maps say each output index reads from operand ``k``."""
    out_dims = _shape_of(instr, output_id)
    by_instr = {id(op): values[i] for i, op in enumerate(instr.operands)}
    got: dict[tuple[int, ...], set[tuple[int, ...]]] = {
        o: set() for o in itertools.product(*(range(n) for n in out_dims))}
    op_dims = tuple(instr.operands[k].shape.dimensions)
    for oi in output_to_input_indexing(instr, output_id)[k]:
        m = oi.map
        assert not m.is_undefined
        if m.is_known_empty:
            continue
        for d in itertools.product(*(range(v.bounds.lower, v.bounds.upper + 1) for v in m.dim_vars)):
            rts = []
            for rt, bound in zip(oi.runtime_vars, m.rt_vars):
                arr = np.asarray(by_instr[id(rt.instruction)])
                raw = int(arr[tuple(rt.map.evaluate(d))])
                rts.append(min(max(raw, bound.bounds.lower), bound.bounds.upper))
            for s in itertools.product(*(range(v.bounds.lower, v.bounds.upper + 1) for v in m.range_vars)):
                syms = [*s, *rts]
                if not m.contains(d, syms):
                    continue
                r = tuple(m.evaluate(d, syms))
                if clip and not all(0 <= x < n for x, n in zip(r, op_dims)):
                    continue
                got[d].add(r)
    return got


def map_writes(instr: HloInstruction, k: int, output_id: int = 0
               ) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """What the input→output maps say each element of operand ``k`` feeds in output ``output_id``."""
    got: dict[tuple[int, ...], set[tuple[int, ...]]] = {
        e: set() for e in itertools.product(*(range(n) for n in instr.operands[k].shape.dimensions))}
    for oi in input_to_output_indexing(instr, k)[output_id]:
        m = oi.map
        assert not m.is_undefined and not m.num_rt_vars
        if m.is_known_empty:
            continue
        for d in itertools.product(*(range(v.bounds.lower, v.bounds.upper + 1) for v in m.dim_vars)):
            for s in itertools.product(*(range(v.bounds.lower, v.bounds.upper + 1) for v in m.range_vars)):
                if m.contains(d, list(s)):
                    got[d].add(tuple(m.evaluate(d, list(s))))
    return got


def check(instr: HloInstruction, values: list[np.ndarray], data_operands: list[int],
          superset: tuple[int, ...] = (), clip: tuple[int, ...] = (), output_id: int = 0,
          inverse: tuple[int, ...] = ()) -> None:
    """Output→input maps of ``data_operands`` give exactly what the evaluator reads (or a
    superset); for the operands in ``inverse`` the input→output maps give exactly its users."""
    for k in data_operands:
        want = reads(instr, k, values, output_id)
        got = map_reads(instr, k, values, clip=k in clip, output_id=output_id)
        if k in superset:
            assert all(want[o] <= got[o] for o in want), k
        else:
            assert got == want, (k, {o: (got[o], want[o]) for o in want if got[o] != want[o]})
    for k, op in enumerate(instr.operands):
        if op.shape.rank == 0 and k not in data_operands:
            for oi in output_to_input_indexing(instr, output_id)[k]:
                assert oi.map.num_results == 0
    for k in inverse:
        users: dict[tuple[int, ...], set[tuple[int, ...]]] = {
            e: set() for e in itertools.product(*(range(n) for n in instr.operands[k].shape.dimensions))}
        for o, elements in reads(instr, k, values, output_id).items():
            for e in elements:
                users[e].add(o)
        assert map_writes(instr, k, output_id) == users, k


dims_st = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@SETTINGS
@given(dims_st, st.randoms(use_true_random=False))
def test_transpose_and_reverse(dims: tuple[int, ...], rnd) -> None:
    perm = list(range(len(dims)))
    rnd.shuffle(perm)
    out = tuple(dims[p] for p in perm)
    rng = np.random.default_rng(0)
    perm_text = ",".join(map(str, perm))
    t = module([shape_text(dims)], f"{shape_text(out)} transpose(p0), dimensions={{{perm_text}}}")
    check(t, operand_values(t, rng), [0], inverse=(0,))
    rev = sorted(rnd.sample(range(len(dims)), rnd.randint(1, len(dims))))
    rev_text = ",".join(map(str, rev))
    r = module([shape_text(dims)], f"{shape_text(dims)} reverse(p0), dimensions={{{rev_text}}}")
    check(r, operand_values(r, rng), [0], inverse=(0,))


def _factor(n: int, rnd) -> tuple[int, ...]:
    out = []
    while n > 1:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        d = rnd.choice(divs)
        out.append(d)
        n //= d
    if rnd.random() < 0.3:
        out.insert(rnd.randint(0, len(out)), 1)
    return tuple(out) or (1,)


@SETTINGS
@given(dims_st, st.randoms(use_true_random=False))
def test_reshape_and_bitcast(dims: tuple[int, ...], rnd) -> None:
    n = int(np.prod(dims))
    out = _factor(n, rnd)
    rng = np.random.default_rng(1)
    r = module([shape_text(dims)], f"{shape_text(out)} reshape(p0)")
    check(r, operand_values(r, rng), [0], inverse=(0,))
    in_layout = list(range(len(dims)))
    out_layout = list(range(len(out)))
    rnd.shuffle(in_layout)
    rnd.shuffle(out_layout)
    b = module([shape_text(dims, tuple(in_layout))], f"{shape_text(out, tuple(out_layout))} bitcast(p0)")
    check(b, operand_values(b, rng), [0], inverse=(0,))


@SETTINGS
@given(dims_st, st.randoms(use_true_random=False))
def test_broadcast_slice_pad(dims: tuple[int, ...], rnd) -> None:
    rng = np.random.default_rng(2)
    out = list(dims)
    where = sorted(rnd.sample(range(len(dims) + 1), 1))
    out.insert(where[0], 3)
    keep = [i for i in range(len(out)) if i != where[0]]
    b = module([shape_text(dims)],
               f"{shape_text(tuple(out))} broadcast(p0), dimensions={{{','.join(map(str, keep))}}}")
    check(b, operand_values(b, rng), [0], inverse=(0,))
    spec, sliced = [], []
    for n in dims:
        start = rnd.randint(0, n - 1)
        limit = rnd.randint(start + 1, n)
        stride = rnd.randint(1, 3)
        spec.append(f"[{start}:{limit}:{stride}]")
        sliced.append(len(range(start, limit, stride)))
    s = module([shape_text(dims)], f"{shape_text(tuple(sliced))} slice(p0), slice={{{', '.join(spec)}}}")
    check(s, operand_values(s, rng), [0], inverse=(0,))
    pads, padded = [], []
    for n in dims:
        lo, hi, interior = rnd.randint(-1, 2), rnd.randint(-1, 2), rnd.randint(0, 2)
        size = n + lo + hi + max(n - 1, 0) * interior
        if size < 1:
            lo = hi = 0
            size = n + (n - 1) * interior
        pads.append(f"{lo}_{hi}_{interior}")
        padded.append(size)
    p = module([shape_text(dims), "f32[]"],
               f"{shape_text(tuple(padded))} pad(p0, p1), padding={'x'.join(pads)}")
    check(p, operand_values(p, rng), [0])


@SETTINGS
@given(dims_st, st.integers(1, 3), st.randoms(use_true_random=False))
def test_concatenate(dims: tuple[int, ...], parts: int, rnd) -> None:
    axis = rnd.randrange(len(dims))
    shapes = []
    for _ in range(parts):
        d = list(dims)
        d[axis] = rnd.randint(1, 3)
        shapes.append(tuple(d))
    out = list(dims)
    out[axis] = sum(s[axis] for s in shapes)
    ops = ", ".join(f"p{i}" for i in range(parts))
    c = module([shape_text(s) for s in shapes],
               f"{shape_text(tuple(out))} concatenate({ops}), dimensions={{{axis}}}")
    check(c, operand_values(c, np.random.default_rng(3)), list(range(parts)),
          inverse=tuple(range(parts)))


@SETTINGS
@given(dims_st, st.randoms(use_true_random=False))
def test_dynamic_slice_and_update(dims: tuple[int, ...], rnd) -> None:
    sizes = tuple(rnd.randint(1, n) for n in dims)
    starts = {k + 1: np.asarray(rnd.randint(-2, n + 1)) for k, n in enumerate(dims)}
    params = [shape_text(dims)] + ["s32[]"] * len(dims)
    idx = ", ".join(f"p{k + 1}" for k in range(len(dims)))
    ds = module(params, f"{shape_text(sizes)} dynamic-slice(p0, {idx}), "
                        f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}")
    rng = np.random.default_rng(4)
    check(ds, operand_values(ds, rng, starts), [0])
    params = [shape_text(dims), shape_text(sizes)] + ["s32[]"] * len(dims)
    idx = ", ".join(f"p{k + 2}" for k in range(len(dims)))
    ints = {k + 1: v for k, v in starts.items()}
    dus = module(params, f"{shape_text(dims)} dynamic-update-slice(p0, p1, {idx})")
    check(dus, operand_values(dus, rng, ints), [0, 1], superset=(0,), clip=(1,))


@SETTINGS
@given(dims_st, st.integers(1, 4), st.randoms(use_true_random=False))
def test_gather_canonical(dims: tuple[int, ...], batch: int, rnd) -> None:
    k = rnd.randint(1, len(dims))
    start_map = rnd.sample(range(len(dims)), k)
    sizes = [rnd.randint(1, n) for n in dims]
    out = (batch, *sizes)
    idx = np.asarray([[rnd.randint(-1, dims[d]) for d in start_map] for _ in range(batch)])
    offsets = ",".join(str(i + 1) for i in range(len(dims)))
    g = module([shape_text(dims), f"s32[{batch},{k}]"],
               f"{shape_text(out)} gather(p0, p1), offset_dims={{{offsets}}}, "
               f"collapsed_slice_dims={{}}, start_index_map={{{','.join(map(str, start_map))}}}, "
               f"index_vector_dim=1, slice_sizes={{{','.join(map(str, sizes))}}}")
    check(g, operand_values(g, np.random.default_rng(5), {1: idx}), [0])


@SETTINGS
@given(dims_st, st.randoms(use_true_random=False))
def test_reduce(dims: tuple[int, ...], rnd) -> None:
    red = sorted(rnd.sample(range(len(dims)), rnd.randint(1, len(dims))))
    out = tuple(n for i, n in enumerate(dims) if i not in red)
    r = module([shape_text(dims), "f32[]"],
               f"{shape_text(out)} reduce(p0, p1), dimensions={{{','.join(map(str, red))}}}, to_apply=sum")
    check(r, operand_values(r, np.random.default_rng(6)), [0], inverse=(0, 1))


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(0, 1))
def test_dot(m: int, n: int, k: int, batch: int) -> None:
    b = (2,) if batch else ()
    lhs, rhs = (*b, k, m), (*b, n, k)
    bd = "lhs_batch_dims={0}, rhs_batch_dims={0}, " if batch else ""
    d = module([shape_text(lhs), shape_text(rhs)],
               f"{shape_text((*b, m, n))} dot(p0, p1), {bd}lhs_contracting_dims={{{batch}}}, "
               f"rhs_contracting_dims={{{batch + 1}}}")
    check(d, operand_values(d, np.random.default_rng(7)), [0, 1])


@SETTINGS
@given(st.lists(st.tuples(st.integers(2, 5), st.integers(1, 3), st.integers(1, 2), st.integers(0, 2),
                          st.integers(0, 1), st.integers(1, 2), st.integers(1, 2)), min_size=1, max_size=2))
def test_reduce_window(spec: list[tuple[int, int, int, int, int, int, int]]) -> None:
    dims, out, parts = [], [], []
    for n, size, stride, lo, hi, wdil, bdil in spec:
        padded = n + lo + hi + (n - 1) * (bdil - 1)
        span = (size - 1) * wdil + 1
        if padded < span:
            size, wdil = 1, 1
            span = 1
        dims.append(n)
        out.append((padded - span) // stride + 1)
        parts.append((size, stride, f"{lo}_{hi}", wdil, bdil))
    window = ("size=" + "x".join(str(p[0]) for p in parts) + " stride=" + "x".join(str(p[1]) for p in parts)
              + " pad=" + "x".join(p[2] for p in parts) + " rhs_dilate=" + "x".join(str(p[3]) for p in parts)
              + " lhs_dilate=" + "x".join(str(p[4]) for p in parts))
    r = module([shape_text(tuple(dims)), "f32[]"],
               f"{shape_text(tuple(out))} reduce-window(p0, p1), window={{{window}}}, to_apply=sum")
    check(r, operand_values(r, np.random.default_rng(8)), [0])


FUSIONS = [
    # slice of a transpose of a reshape, read through a fusion
    """HloModule m
f {
  p0 = f32[4,6] parameter(0)
  r = f32[2,2,6] reshape(p0)
  t = f32[6,2,2] transpose(r), dimensions={2,0,1}
  ROOT s = f32[3,2,1] slice(t), slice={[0:6:2], [0:2], [1:2]}
}
ENTRY e {
  p = f32[4,6] parameter(0)
  ROOT fusion = f32[3,2,1] fusion(p), kind=kLoop, calls=f
}""",
    # pad of a concatenate, reversed
    """HloModule m
f {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,2] parameter(1)
  z = f32[] constant(0)
  c = f32[2,5] concatenate(p0, p1), dimensions={1}
  p = f32[4,10] pad(c, z), padding=1_1x0_1_1
  ROOT r = f32[4,10] reverse(p), dimensions={0,1}
}
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT fusion = f32[4,10] fusion(a, b), kind=kLoop, calls=f
}""",
    # reduce of a broadcast plus the operand itself (two maps for one operand)
    """HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[3,4] parameter(0)
  z = f32[] constant(0)
  b = f32[3,2,4] broadcast(p0), dimensions={0,2}
  r = f32[3,4] reduce(b, z), dimensions={1}, to_apply=sum
  t = f32[3,4] add(r, p0)
  ROOT s = f32[3,2] slice(t), slice={[0:3], [1:4:2]}
}
ENTRY e {
  a = f32[3,4] parameter(0)
  ROOT fusion = f32[3,2] fusion(a), kind=kLoop, calls=f
}""",
]


@pytest.mark.parametrize("text", FUSIONS)
def test_fusion_maps_match_reference(text: str) -> None:
    root = parse_module(text).entry.root
    values = operand_values(root, np.random.default_rng(9))
    check(root, values, [k for k, op in enumerate(root.operands) if op.shape.rank])


def test_evaluator_matches_numpy() -> None:
    t = module(["f32[2,3]"], "f32[3,2] transpose(p0), dimensions={1,0}")
    x = np.arange(6.0).reshape(2, 3)
    assert (evaluate(t, [x]) == x.T).all()


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), st.integers(1, 3),
       st.randoms(use_true_random=False))
def test_gather_general(dims: tuple[int, ...], batch: int, rnd) -> None:
    """Collapsed and batching dims (an extension beyond XLA's canonical-only rule)."""
    r = len(dims)
    op_batch = rnd.sample(range(r), rnd.randint(0, min(1, r - 1)))
    rest = [d for d in range(r) if d not in op_batch]
    start_map = rnd.sample(rest, rnd.randint(1, len(rest)))
    collapsed = sorted(d for d in start_map if rnd.random() < 0.5)
    sizes = [1 if d in op_batch or d in collapsed else rnd.randint(1, dims[d]) for d in range(r)]
    window = [d for d in range(r) if d not in collapsed and d not in op_batch]
    idx_shape = (*[dims[d] for d in op_batch], batch, len(start_map))
    ivd = len(idx_shape) - 1
    batch_sizes = list(idx_shape[:-1])
    out_rank = len(window) + len(batch_sizes)
    offset_dims = sorted(rnd.sample(range(out_rank), len(window)))
    out, bi, wi = [], 0, 0
    for pos in range(out_rank):
        if pos in offset_dims:
            out.append(sizes[window[wi]])
            wi += 1
        else:
            out.append(batch_sizes[bi])
            bi += 1
    idx = np.asarray(rnd.choices(range(-1, max(dims) + 1), k=int(np.prod(idx_shape)))).reshape(idx_shape)

    def lst(xs: list[int]) -> str:
        return ",".join(map(str, xs))

    text = (f"{shape_text(tuple(out))} gather(p0, p1), offset_dims={{{lst(offset_dims)}}}, "
            f"collapsed_slice_dims={{{lst(collapsed)}}}, start_index_map={{{lst(start_map)}}}, "
            f"operand_batching_dims={{{lst(op_batch)}}}, "
            f"start_indices_batching_dims={{{lst(list(range(len(op_batch))))}}}, "
            f"index_vector_dim={ivd}, slice_sizes={{{lst(sizes)}}}")
    g = module([shape_text(dims), shape_text(idx_shape, ty="s32")], text)
    check(g, operand_values(g, np.random.default_rng(10), {1: idx}), [0])


@SETTINGS
@given(dims_st, st.integers(2, 3), st.randoms(use_true_random=False))
def test_variadic_reduce_every_output(dims: tuple[int, ...], n: int, rnd) -> None:
    """Every output of a variadic reduce reads every input (the reducer mixes them)."""
    red = sorted(rnd.sample(range(len(dims)), rnd.randint(1, len(dims))))
    out = tuple(d for i, d in enumerate(dims) if i not in red)
    params = [shape_text(dims)] * n + ["f32[]"] * n
    ops = ", ".join(f"p{i}" for i in range(2 * n))
    tup = "(" + ", ".join([shape_text(out)] * n) + ")"
    r = module(params, f"{tup} reduce({ops}), dimensions={{{','.join(map(str, red))}}}, to_apply=sum")
    values = operand_values(r, np.random.default_rng(11))
    for o in range(n):
        check(r, values, list(range(n)), output_id=o, inverse=tuple(range(2 * n)))


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=5, max_size=5), st.integers(0, 2), st.integers(1, 2),
       st.randoms(use_true_random=False))
def test_dot_general(sizes: list[int], n_batch: int, n_contract: int, rnd) -> None:
    """Random batch/contracting dims in random positions of both operands."""
    batch, contract = sizes[:n_batch], sizes[2:2 + n_contract]
    m, n = sizes[3], sizes[4]
    lhs_roles = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)] + [("m", 0)]
    rhs_roles = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)] + [("n", 0)]
    rnd.shuffle(lhs_roles)
    rnd.shuffle(rhs_roles)
    size = {"b": batch, "c": contract, "m": [m], "n": [n]}

    def dims_of(roles: list[tuple[str, int]]) -> tuple[int, ...]:
        return tuple(size[r][i] for r, i in roles)

    def where(roles: list[tuple[str, int]], kind: str, count: int) -> str:
        return ",".join(str(roles.index((kind, i))) for i in range(count))

    out = (*batch, m, n)
    text = (f"{shape_text(out)} dot(p0, p1), lhs_batch_dims={{{where(lhs_roles, 'b', n_batch)}}}, "
            f"rhs_batch_dims={{{where(rhs_roles, 'b', n_batch)}}}, "
            f"lhs_contracting_dims={{{where(lhs_roles, 'c', n_contract)}}}, "
            f"rhs_contracting_dims={{{where(rhs_roles, 'c', n_contract)}}}")
    d = module([shape_text(dims_of(lhs_roles)), shape_text(dims_of(rhs_roles))], text)
    check(d, operand_values(d, np.random.default_rng(12)), [0, 1])


@SETTINGS
@given(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2), st.integers(1, 2),
       st.lists(st.tuples(st.integers(1, 4), st.integers(1, 3), st.integers(1, 2), st.integers(0, 1),
                          st.integers(0, 1), st.integers(1, 2), st.integers(1, 2), st.booleans()),
                min_size=1, max_size=2),
       st.randoms(use_true_random=False))
def test_convolution(fgc: int, bgc: int, k_in: int, per_group_out: int,
                     spatial: list[tuple[int, int, int, int, int, int, int, bool]], rnd) -> None:
    """Feature groups, dilations, padding, stride and reversal are exact on the input; batch
    groups give XLA's superset (a range variable over the groups instead of the output
    feature's group)."""
    if fgc > 1 and bgc > 1:
        bgc = 1
    out_b = 1 + rnd.randint(0, 1)
    in_dims, k_dims, out_dims, parts = [], [], [], []
    for n, size, stride, lo, hi, wdil, bdil, rev in spatial:
        padded = n + lo + hi + (n - 1) * (bdil - 1)
        span = (size - 1) * wdil + 1
        if padded < span:
            size, wdil, span = 1, 1, 1
        in_dims.append(n)
        k_dims.append(size)
        out_dims.append((padded - span) // stride + 1)
        parts.append((size, stride, f"{lo}_{hi}", wdil, bdil, int(rev)))
    groups = max(fgc, bgc)
    out_f = groups * per_group_out
    digits = "".join(str(i) for i in range(len(spatial)))
    lhs = (out_b * bgc, k_in * fgc, *in_dims)
    rhs = (k_in, out_f, *k_dims)
    out = (out_b, out_f, *out_dims)

    def field(i: int) -> str:
        return "x".join(str(p[i]) for p in parts)

    window = (f"size={field(0)} stride={field(1)} pad={field(2)} rhs_dilate={field(3)} "
              f"lhs_dilate={field(4)} window_reversal={field(5)}")
    c = module([shape_text(lhs), shape_text(rhs)],
               f"{shape_text(out)} convolution(p0, p1), window={{{window}}}, "
               f"dim_labels=bf{digits}_io{digits}->bf{digits}, feature_group_count={fgc}, "
               f"batch_group_count={bgc}")
    # Output points over padding or base-dilation holes multiply the kernel by the padding
    # value; XLA's kernel map does not exclude them, so it is exact only without holes.
    holes = any(lo or hi or bdil > 1 for _, _, _, lo, hi, _, bdil, _ in spatial)
    superset = ((0,) if bgc > 1 else ()) + ((1,) if holes else ())
    check(c, operand_values(c, np.random.default_rng(13)), [0, 1], superset=superset)


@SETTINGS
@given(dims_st)
def test_elementwise_with_scalar_operand(dims: tuple[int, ...]) -> None:
    """A rank-0 operand of a non-scalar elementwise op is read by every output element."""
    e = module([shape_text(dims), "f32[]"], f"{shape_text(dims)} multiply(p0, p1)")
    check(e, operand_values(e, np.random.default_rng(14)), [0, 1], inverse=(0,))


def _random_step(dims: tuple[int, ...], src: str, rnd) -> tuple[str, tuple[int, ...]]:
    """One random data-movement instruction reading ``src`` (of shape ``dims``)."""
    kind = rnd.choice(["transpose", "reverse", "slice", "reshape", "broadcast", "pad", "negate"])
    r = len(dims)
    if kind == "transpose":
        perm = rnd.sample(range(r), r)
        out = tuple(dims[p] for p in perm)
        return f"{shape_text(out)} transpose({src}), dimensions={{{','.join(map(str, perm))}}}", out
    if kind == "reverse":
        rev = sorted(rnd.sample(range(r), rnd.randint(1, r)))
        return f"{shape_text(dims)} reverse({src}), dimensions={{{','.join(map(str, rev))}}}", dims
    if kind == "slice":
        spec, out = [], []
        for n in dims:
            start = rnd.randint(0, n - 1)
            limit, stride = rnd.randint(start + 1, n), rnd.randint(1, 2)
            spec.append(f"[{start}:{limit}:{stride}]")
            out.append(len(range(start, limit, stride)))
        return f"{shape_text(tuple(out))} slice({src}), slice={{{', '.join(spec)}}}", tuple(out)
    if kind == "reshape":
        out = _factor(int(np.prod(dims)), rnd)[:3]
        if int(np.prod(out)) != int(np.prod(dims)):
            out = (int(np.prod(dims)),)
        return f"{shape_text(out)} reshape({src})", out
    if kind == "broadcast" and r < 3:
        where = rnd.randint(0, r)
        out = dims[:where] + (2,) + dims[where:]
        keep = ",".join(str(i) for i in range(r + 1) if i != where)
        return f"{shape_text(out)} broadcast({src}), dimensions={{{keep}}}", out
    if kind == "pad":
        pads, out = [], []
        for n in dims:
            lo, hi, interior = rnd.randint(-1, 1), rnd.randint(0, 1), rnd.randint(0, 1)
            if n + lo + hi + (n - 1) * interior < 1:
                lo = 0
            pads.append(f"{lo}_{hi}_{interior}")
            out.append(n + lo + hi + (n - 1) * interior)
        return f"{shape_text(tuple(out))} pad({src}, zero), padding={'x'.join(pads)}", tuple(out)
    return f"{shape_text(dims)} negate({src})", dims


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple), st.integers(1, 4),
       st.randoms(use_true_random=False))
def test_random_fusion_chains(dims: tuple[int, ...], steps: int, rnd) -> None:
    """Composition through a fused chain of data-movement ops reads exactly what it should."""
    body = [f"  p0 = {shape_text(dims)} parameter(0)", "  zero = f32[] constant(0)"]
    src, cur = "p0", dims
    for i in range(steps):
        text, cur = _random_step(cur, src, rnd)
        src = f"i{i}"
        body.append(f"  {'ROOT ' if i == steps - 1 else ''}{src} = {text}")
    hlo = ("HloModule m\nf {\n" + "\n".join(body) + "\n}\nENTRY e {\n"
           f"  a = {shape_text(dims)} parameter(0)\n"
           f"  ROOT fusion = {shape_text(cur)} fusion(a), kind=kLoop, calls=f\n}}\n")
    root = parse_module(hlo).entry.root
    check(root, operand_values(root, np.random.default_rng(15)), [0])
