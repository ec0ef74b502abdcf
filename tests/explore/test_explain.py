"""cute.explain: every derivation's steps rebuild the library's result, checked by brute force
from the definitions on random layouts; the explorer's hover links point at the cells a result
cell really came from; `tensorlayout explain` prints it and rejects bad input in one line."""

from __future__ import annotations

import json
import random

import pytest

from tensorlayout.cli import main
from tensorlayout.cute import Layout, algebra, coalesce, cosize
from tensorlayout.cute.explain import OPERATIONS, explain, format_derivation, split_call, tiler_of
from tensorlayout.errors import AlgebraError, LayoutError, ParseError, TensorLayoutError
from tensorlayout.explore._ops import links_of

RNG = random.Random(32)


def _random_layout(rng: random.Random, rank: int) -> Layout:
    """A random injective layout: a permutation of compact modes, sometimes with a gap."""
    shape = [rng.choice([1, 2, 3, 4, 8]) for _ in range(rank)]
    order = list(range(rank))
    rng.shuffle(order)
    stride, acc = [0] * rank, rng.choice([1, 1, 2])
    for i in order:
        stride[i] = acc
        acc *= shape[i] * rng.choice([1, 1, 2])
    return Layout(tuple(shape), tuple(stride)) if rank > 1 else Layout(shape[0], stride[0])


def _cases(n: int) -> list[str]:
    out = []
    for _ in range(n):
        a = _random_layout(RNG, 2)
        sizes = [int(m.size()) for m in a.modes()]
        tile = tuple(RNG.choice([d for d in (1, 2, 4) if s % d == 0] or [1]) for s in sizes)
        b = _random_layout(RNG, 2)
        op = RNG.choice(sorted(OPERATIONS))
        if op in ("right_inverse", "left_inverse", "coalesce"):
            out.append(f"{op}({a})")
        elif op == "complement":
            out.append(f"complement({a},{cosize(a) * RNG.choice([1, 2, 4])})")
        elif op.endswith("_divide"):
            out.append(f"{op}({a},({tile[0]},{tile[1]}))")
        else:
            out.append(f"{op}({a},{b})")
    return out


def _values(lay: Layout) -> list[int]:
    return [lay(k) for k in range(lay.size())]


@pytest.mark.parametrize("text", _cases(120))
def test_steps_rebuild_the_result(text: str) -> None:
    try:
        d = explain(text)
    except AlgebraError:
        pytest.skip("C++ rejects this operation too")
    last = d.steps[-1]
    a = d.inputs[0][1]
    assert isinstance(a, Layout)
    if d.op in ("right_inverse", "left_inverse"):
        check = next(s for s in d.steps if s.name == "I").value
        assert isinstance(check, Layout)
        assert _values(check) == list(range(check.size()))  # the identity, from the definition
    elif d.op == "complement":
        both = next(s for s in d.steps if s.name == "AR").value
        assert isinstance(both, Layout)
        assert len(set(_values(both))) == both.size()  # A and its complement never collide
    elif d.op == "coalesce":
        assert _values(d.result) == _values(a) and d.result == coalesce(a)
    else:
        regrouped = last.formula.startswith(f"{d.op} regrouping")
        rebuilt = d.steps[-2].value if regrouped else last.value
        assert isinstance(rebuilt, Layout)
        assert sorted(_values(rebuilt)) == sorted(_values(d.result))
        assert d.result == getattr(algebra, d.op)(a, d.inputs[1][1])
    assert format_derivation(d).endswith(f"result: {d.result}")


_READERS = ("composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "coalesce",
            "right_inverse")


@pytest.mark.parametrize("text", [t for t in _cases(80) if t.split("(")[0] in _READERS])
def test_links_point_at_the_cells_results_read(text: str) -> None:
    """A result cell linked to cell i of A holds A's offset at i (composition and divides read
    A; a right inverse holds i with A(i) equal to its index)."""
    try:
        d = explain(text)
    except AlgebraError:
        pytest.skip("C++ rejects this operation too")
    a = d.inputs[0][1]
    assert isinstance(a, Layout)
    links = links_of(d)
    dims = [int(m.size()) for m in a.modes()] if isinstance(a.shape, tuple) else [a.size()]
    res = d.result
    rdims = [int(m.size()) for m in res.modes()] if isinstance(res.shape, tuple) else [res.size()]

    def flat(key: str, ds: list[int]) -> int:
        k, mul = 0, 1
        for c, n in zip((int(x) for x in key.split(",")), ds):
            k, mul = k + c * mul, mul * n
        return k

    assert links or d.result.size() == 0
    for rkey, src in links.items():
        if "A" not in src:  # read past A's domain (a composition extends A): no cell to light
            continue
        r = flat(rkey, rdims)
        i = flat(src["A"], dims)
        if d.op == "right_inverse":
            assert a(i) == r
        else:
            assert d.result(r) == a(i)


def test_products_link_each_cell_to_a_copy_of_a() -> None:
    d = explain("blocked_product((2,2):(1,2),(3,4):(1,3))")
    links = links_of(d)
    assert len(links) == d.result.size() == 48
    by_copy: dict[str, set[str]] = {}
    for src in links.values():
        by_copy.setdefault(src["B"], set()).add(src["A"])
    assert len(by_copy) == 12 and all(len(cells) == 4 for cells in by_copy.values())


def test_reading_operations() -> None:
    assert split_call("f(a, (b, c), <d, e>)") == ("f", ["a", "(b, c)", "<d, e>"])
    assert tiler_of("((2,4))") == ((2, 4),)
    with pytest.raises(ParseError, match="an operation name"):
        split_call("(8,8):(8,1)")
    with pytest.raises(ParseError, match="a closing bracket"):
        split_call("f((8,8):(8,1)")
    with pytest.raises(AlgebraError, match="explain knows"):
        explain("frobnicate(8:1)")
    with pytest.raises(AlgebraError, match="takes two arguments"):
        explain("logical_divide(8:1)")
    with pytest.raises(LayoutError, match="expected a tiler"):
        tiler_of("_")


def test_cli_prints_the_derivation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "logical_divide((8,8):(8,1),(2,4))"]) == 0
    out = capsys.readouterr().out
    assert " C0 = complement(B0, 8)    = 4:2 " in out
    assert out.rstrip().endswith("result: ((2,4),(4,2)):((8,16),(1,4))")
    assert main(["explain", "complement(4:2,24)", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["result"] == "(2,3):(1,8)" and data["steps"][-1]["value"] == "(4,(2,3)):(2,(1,8))"


@pytest.mark.parametrize("text, kind", [
    ("logical_divide((8,8):(8,1),(2,4)", "ParseError"),
    ("rake((2,2):(1,2))", "AlgebraError"),
    ("logical_divide((8,8):(8,1),(2,4,2))", "AlgebraError"),
])
def test_cli_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], text: str, kind: str) -> None:
    assert main(["explain", text]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tensorlayout: {kind}: ") and err.count("\n") == 1
    assert issubclass(getattr(__import__("tensorlayout.errors", fromlist=[kind]), kind), TensorLayoutError)
