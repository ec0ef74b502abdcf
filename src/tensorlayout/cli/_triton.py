"""What `show` and `render` do with Triton text (:mod:`tensorlayout.cli._triton_text` reads it):
a printed `LinearLayout`, an encoding (`#ttg.blocked<{...}>`, ...) with `--shape A,B` or inside
`tensor<AxBxT, ...>`.

>>> import argparse
>>> args = argparse.Namespace(target="tensor<2x4xf16, #ttg.blocked<{sizePerThread = [1, 1], "
...     "threadsPerWarp = [2, 4], warpsPerCTA = [1, 1], order = [1, 0]}>>", tla=None, shape=None)
>>> from tensorlayout.cli._triton_text import triton_layout
>>> print(show_text(triton_layout(args), None).splitlines()[-2])
[[T0:0, T1:0, T2:0, T3:0]
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tensorlayout import convert, triton
from tensorlayout._lazy import lazy_modules
from tensorlayout.core.element_types import ELEMENT_TYPES
from tensorlayout.errors import UnsupportedError

if TYPE_CHECKING:  # Triton's modules load when Triton text comes (`show` of a shape needs none)
    from tensorlayout.triton import LinearLayout

__all__ = ["NOTATIONS", "SHOWN_POINTS", "converted", "cute_tv", "picture_dims", "show_text",
           "tensor_element"]

#: the Triton pictures' module (which layouts are distributed or shared), loaded on first use
_lazy = lazy_modules({"render": "tensorlayout.render._triton"})


#: what `show --as` turns a Triton layout into
NOTATIONS = ("cute", "xla", "cute-tv")
#: MLIR's integer and float8 spellings that XLA spells otherwise (the others are the same)
_MLIR_TYPES = {"i1": "pred", "i4": "s4", "i8": "s8", "i16": "s16", "i32": "s32", "i64": "s64",
               "f8E4M3FN": "f8e4m3fn", "f8E5M2": "f8e5m2", "f8E4M3FNUZ": "f8e4m3fnuz",
               "f8E5M2FNUZ": "f8e5m2fnuz"}
_TENSOR_TYPE = re.compile(r"^\s*(?:tensor|!ttg\.memdesc)<(?:[0-9]+x)+([A-Za-z][A-Za-z0-9]*)\s*,")
#: the thread modes of a CuTe TV layout, in CuTe's order (thread = lane + lanes * (warp + warps * block))
_THREAD_DIMS = ("lane", "warp", "block")
#: `show` prints Triton's picture of a layout up to this many points (a 128x128 tile).
SHOWN_POINTS = 1 << 14


def picture_dims(ll: LinearLayout) -> tuple[int, ...]:
    """The dims a picture window of ``ll`` ranges over: rows x columns of a distributed
    layout's tensor, the out dims of a shared one."""
    sizes = ll.get_out_dim_sizes()
    if _lazy("render").is_shared(ll) or len(sizes) <= 1:
        return tuple(sizes) if sizes else (1,)
    rows = 1
    for n in sizes[:-1]:
        rows *= n
    return rows, sizes[-1]


def tensor_element(text: str) -> str | None:
    """The XLA name of the element type of Triton text ``tensor<AxBxT, ...>`` (None without one).

    >>> tensor_element("tensor<4x16xi8, #blocked>"), tensor_element("#ttg.blocked<{order = [0]}>")
    ('s8', None)
    """
    found = _TENSOR_TYPE.match(text)
    if found is None:
        return None
    name = _MLIR_TYPES.get(found.group(1), found.group(1))
    if name not in ELEMENT_TYPES:
        raise UnsupportedError(f"Triton element type {found.group(1)!r} has no XLA element type")
    return name


def cute_tv(ll: LinearLayout) -> str:
    """A distributed layout as CuTe's thread-value layout ``(thread, value) -> element``: thread
    = lane + lanes * (warp + warps * block), value = register, the element numbered as CuTe
    numbers a tile's coordinates (``dim0 + D0 * dim1``, the first dim fastest).

    >>> from tensorlayout.triton import BlockedLayout
    >>> cute_tv(BlockedLayout([1, 2], [4, 8], [1, 1], [1, 0]).to_linear_layout([4, 16]))
    '((8,4),2):((8,1),4)'
    """
    ins = ll.get_in_dim_names()
    if not _lazy("render").is_distributed(ll):
        raise UnsupportedError(f"--as cute-tv is the thread-value form of a distributed layout (in dims "
                               f"register, lane, warp, block); this one has {ins}: --as cute gives it")
    threads = [d for d in _THREAD_DIMS if d in ins and ll.get_in_dim_size(d) > 1]
    values = ["register"] if "register" in ins and ll.get_in_dim_size("register") > 1 else []
    if not threads or not values:
        raise UnsupportedError(f"a CuTe TV layout needs threads and values; this layout has "
                               f"{' and '.join(f'{d} {ll.get_in_dim_size(d)}' for d in ins)}")
    cute = triton.to_cute(ll, threads + values)
    shape, stride = cute.shape, cute.stride
    assert isinstance(shape, tuple) and isinstance(stride, tuple)
    thr = (shape[:-1], stride[:-1]) if len(threads) > 1 else (shape[0], stride[0])
    return f"({_mode_text(thr[0])},{_mode_text(shape[-1])}):({_mode_text(thr[1])},{_mode_text(stride[-1])})"


def _mode_text(mode: object) -> str:
    """CuTe's text of one (possibly nested) mode of shapes or strides."""
    if isinstance(mode, tuple):
        return "(" + ",".join(_mode_text(m) for m in mode) + ")"
    return str(mode)


def converted(ll: LinearLayout, notation: str, element: str, text: str = "") -> str:
    """``ll`` as CuTe (element -> index of the point holding it), as an XLA shape (whose element
    type is Triton text ``text``'s tensor type, else ``element``; a second line says what its
    offsets are and where the element type came from) or as CuTe's TV layout (``cute-tv``)."""
    if notation == "cute-tv":
        return cute_tv(ll)
    try:
        cute = triton.element_layout(ll)
    except UnsupportedError as err:
        raise UnsupportedError(f"no {'XLA' if notation == 'xla' else 'CuTe'} layout places the elements "
                               f"of this Triton layout: {err}") from None
    if notation == "cute":
        return str(cute)
    found = tensor_element(text)
    origin = "from the tensor type" if found else "from --dtype (default f16; an encoding has none)"
    sizes = {d: ll.get_in_dim_size(d) if ll.has_in_dim(d) else 1 for d in ("register", "lane", "warp")}
    codomain = ("shared-memory offset of each element" if _lazy("render").is_shared(ll) else
                f"index of the point holding each element, register + {sizes['register']} * (lane + "
                f"{sizes['lane']} * (warp + {sizes['warp']} * block))")
    return f"{convert.cute_to_xla(cute, found or element)}\n(offsets: {codomain}; element type {origin})"


def show_text(ll: LinearLayout, header: str | None, hw_view: bool = False) -> str:
    """The layout as Triton prints it, a line of facts, and Triton's picture of it (with
    ``hw_view``, the hardware's point of view, as ``triton-tensor-layout --use-hw-view``)."""
    ins = ", ".join(f"{n} {ll.get_in_dim_size(n)}" for n in ll.get_in_dim_names())
    outs = ", ".join(f"{n} {s}" for n, s in ll.out_dims)
    lines = [*([header] if header else []), str(ll).strip("\n"),
             f"in dims {ins} -> out dims {outs}; injective {ll.is_injective()}, "
             f"surjective {ll.is_surjective()}", ""]
    points = max(ll.get_total_in_dim_size(), ll.get_total_out_dim_size())
    if points > SHOWN_POINTS:
        lines.append(f"(Triton's picture of {points} points is left out past {SHOWN_POINTS}: "
                     "`tensorlayout render` draws a window of it)")
    elif (pictures := _lazy("render")).is_distributed(ll) \
            and {"register", "lane", "warp", "block"} <= set(ll.get_in_dim_names()):
        lines.append(triton.get_distributed_view(ll, hw_view).rstrip("\n"))
    elif pictures.is_shared(ll) and {"offset", "block"} <= set(ll.get_in_dim_names()):
        lines.append(triton.get_shared_view(ll, hw_view).rstrip("\n"))
    return "\n".join(lines)
