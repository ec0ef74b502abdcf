"""gpu2 conformance checks of Triton's ``LinearLayout`` methods and constructors (see
``tests/gpu/gpu2/__init__.py``).

A ``triton_linear_layout_methods`` record holds one random layout and the results of the binding's
methods on it, one field per method; each present field goes through ``FIELDS`` (an unknown field
fails, naming itself). A ``triton_linear_layout_ctors`` record names a constructor (``CTORS``) and
its arguments in the binding's spelling.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tensorlayout.errors import TensorLayoutError
from tensorlayout.triton import LinearLayout


def build(spec: dict[str, Any]) -> LinearLayout:
    """The layout of a record's ``{bases, out_dim_names, out_dim_sizes, require_surjective}``."""
    return LinearLayout.from_bases(spec["bases"], spec["out_dim_names"], spec["out_dim_sizes"],
                                   spec["require_surjective"])


def dump(ll: LinearLayout) -> dict[str, Any]:
    """A layout in the record's ``LLdump`` form."""
    return {"in_dims": [[n, vs] for n, vs in ll.bases], "out_dims": [[n, s] for n, s in ll.out_dims],
            "text": str(ll), "is_surjective": ll.is_surjective(), "is_injective": ll.is_injective(),
            "is_invertible": ll.is_invertible()}


def check_dump(ll: LinearLayout, expected: dict[str, Any]) -> None:
    got = dump(ll)
    assert got == expected, (got, expected)


def check_binary(op: Callable[[LinearLayout, LinearLayout], LinearLayout], key: str) -> Callable[..., None]:
    """A check of ``{<key>: spec, result | error}``: our result equals Triton's, or, where Triton
    raised, ours is a typed error."""
    def check(ll: LinearLayout, value: dict[str, Any]) -> None:
        other = build(value[key])
        try:
            got = op(ll, other)
        except TensorLayoutError as e:
            assert "error" in value, (value, e)
            return
        assert "error" not in value, (value["error"], str(got))
        check_dump(got, value["result"])
    return check


def check_view(view: Callable[[LinearLayout], str]) -> Callable[[LinearLayout, Any], None]:
    def check(ll: LinearLayout, value: str) -> None:
        assert view(ll) == value
    return check


def check_view_length(view: Callable[[LinearLayout], str]) -> Callable[[LinearLayout, Any], None]:
    """The views longer than the recorder kept are stored as their length."""
    def check(ll: LinearLayout, value: int) -> None:
        assert len(view(ll)) == value
    return check


def check_apply(ll: LinearLayout, pairs: list[list[dict[str, int]]]) -> None:
    for ins, outs in pairs:
        assert ll.apply(ins) == outs, (ins, outs)


def check_eq_rebuilt(ll: LinearLayout, value: bool) -> None:
    rebuilt = LinearLayout.from_bases(ll.bases, ll.get_out_dim_names(), ll.get_out_dim_sizes(), False)
    assert (rebuilt == ll) == value


VIEWS: dict[str, Callable[[LinearLayout], str]] = {
    "distributed_view_false": lambda ll: ll.get_distributed_view(False),
    "distributed_view_true": lambda ll: ll.get_distributed_view(True),
    "shared_view_false": lambda ll: ll.get_shared_view(False),
    "shared_view_true": lambda ll: ll.get_shared_view(True),
}

#: Record field -> check(layout, value).
FIELDS: dict[str, Callable[[LinearLayout, Any], None]] = {
    "result": check_dump,
    "num_in_dims": lambda ll, v: _equal(ll.num_in_dims, v),
    "num_out_dims": lambda ll, v: _equal(ll.num_out_dims, v),
    "in_dim_names": lambda ll, v: _equal(ll.get_in_dim_names(), v),
    "out_dim_names": lambda ll, v: _equal(ll.get_out_dim_names(), v),
    "matrix": lambda ll, v: _equal(ll.get_matrix_view(), v),
    "apply": check_apply,
    "invert": lambda ll, v: check_dump(ll.invert(), v),
    "pseudoinvert": lambda ll, v: check_dump(ll.pseudoinvert(), v),
    "mul": check_binary(lambda a, b: a * b, "other"),
    "compose": check_binary(lambda a, b: a.compose(b), "outer"),
    "invert_and_compose": check_binary(lambda a, b: a.invert_and_compose(b), "outer"),
    "eq_rebuilt": check_eq_rebuilt,
    **{k: check_view(v) for k, v in VIEWS.items()},
    **{f"{k}_omitted": check_view_length(v) for k, v in VIEWS.items()},
}

#: Fields that describe the case rather than a result.
META = {"id", "layout"}


def _equal(got: Any, expected: Any) -> None:
    assert got == expected, (got, expected)


def check_methods(record: dict[str, Any]) -> None:
    ll = build(record["layout"])
    unknown = set(record) - set(FIELDS) - META
    assert not unknown, f"no check for field(s) {sorted(unknown)}: add them to FIELDS"
    for name, value in record.items():
        if name not in META:
            FIELDS[name](ll, value)


#: Constructor name -> LinearLayout's constructor.
CTORS: dict[str, Callable[..., LinearLayout]] = {
    "identity_1d": LinearLayout.identity_1d,
    "strided_1d": LinearLayout.strided_1d,
    "zeros_1d": LinearLayout.zeros_1d,
}


def snake(name: str) -> str:
    """The binding's argument name (``outDimSize``) in Python spelling (``out_dim_size``)."""
    return re.sub("([A-Z])", r"_\1", name).lower()


def check_ctor(record: dict[str, Any]) -> None:
    assert record["ctor"] in CTORS, f"no constructor {record['ctor']!r}: add it to CTORS"
    ll = CTORS[record["ctor"]](**{snake(k): v for k, v in record["args"].items()})
    check_dump(ll, record["result"])


HANDLERS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    ("triton_linear_layout_methods", "triton_linear_layout_methods"): check_methods,
    ("triton_linear_layout_ctors", "triton_linear_layout_ctors"): check_ctor,
}
