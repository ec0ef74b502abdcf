"""Triton itself, run in forked children: a failed C++ check aborts the whole process, so each
batch runs in a child and a batch that dies is re-run case by case to name the culprit.

Results are ``("ll", bases, out_dims)``, ``("error", message)`` for a Python exception, or
``("aborted", None)`` when the process died (Triton's ``LLVM ERROR``/``assert``).
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

from tensorlayout.errors import TensorLayoutError
from tensorlayout.triton import LinearLayout

Result = tuple[str, Any, Any]


def agrees(ours: LinearLayout | TensorLayoutError, result: Result, shape: Sequence[int], case: Any) -> bool:
    """Assert that our layout for ``shape`` (or our error) is Triton's ``result``: the same layout
    over dims ``dim0, dim1, ...``, or an error where Triton gave none. Whether Triton gave a layout."""
    kind, bases, _ = result
    if kind != "ll":
        assert isinstance(ours, TensorLayoutError), (case, shape, kind, bases, ours)
        return False
    assert isinstance(ours, LinearLayout), (case, shape, ours)
    names = [f"dim{i}" for i in range(len(shape))]
    expected = LinearLayout.from_bases(bases, names, shape, require_surjective=False)
    assert ours == expected, (case, shape, str(ours), str(expected))
    return True


def _child(fn: Callable[[Any], Any], items: Sequence[Any]) -> tuple[list[Result], str]:
    """Run ``fn`` over ``items`` in a child; results stream back until the child ends or dies.

    Returns the results received and, if the child died, the last line it wrote to stderr.
    """
    with tempfile.TemporaryFile() as err:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            _serve(fn, items, w, err.fileno())
        os.close(w)
        results: list[Result] = []
        with os.fdopen(r, "rb") as f:
            while head := f.read(8):
                results.append(pickle.loads(f.read(int.from_bytes(head, "little"))))
        _, status = os.waitpid(pid, 0)
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    return results, ("" if status == 0 else (lines[-1] if lines else f"exit status {status}"))


def _serve(fn: Callable[[Any], Any], items: Sequence[Any], w: int, err: int) -> None:  # pragma: no cover
    """The child: stream one pickled result per item, then exit without cleanup."""
    faulthandler.disable()
    os.dup2(err, 2)
    with os.fdopen(w, "wb") as out:
        for x in items:
            try:
                res = fn(x)
            except Exception as e:
                res = ("error", f"{type(e).__name__}: {e}", None)
            data = pickle.dumps(res)
            out.write(len(data).to_bytes(8, "little") + data)
            out.flush()
    os._exit(0)


def run_isolated(fn: Callable[[Any], Result], items: Sequence[Any]) -> list[Result]:
    """``[fn(x) for x in items]`` in child processes; a case that kills its child gives
    ``("aborted", last stderr line, None)`` and the rest run in a fresh child."""
    results: list[Result] = []
    while len(results) < len(items):
        got, died = _child(fn, items[len(results):])
        results += got
        if died and len(results) < len(items):
            results.append(("aborted", died, None))
    return results


class Gluon:
    """Gluon's builder with a module and a function to insert into (bank_conflicts needs one)."""

    def __init__(self) -> None:
        from triton._C.libtriton import gluon_ir, ir

        self.ctx = ir.context()
        ir.load_dialects(self.ctx)
        self.builder = gluon_ir.GluonOpBuilder(self.ctx)
        module = self.builder.create_module()
        fn = self.builder.get_or_insert_function(module, "f", self.builder.get_function_ty([], []),
                                                 "public", False)
        module.push_back(fn)
        self.builder.set_insertion_point_to_start(fn.add_entry_block())
        self._keep = (module, fn)

    def to_linear_layout(self, layout: Any, shape: Sequence[int]) -> Result:
        got = self.builder.to_linear_layout(layout._to_ir(self.builder), list(shape))
        if hasattr(got, "offset_bases"):
            bases = [["offset", got.offset_bases], ["block", got.block_bases]]
        else:
            bases = [["register", got.reg_bases], ["lane", got.lane_bases], ["warp", got.warp_bases],
                     ["block", got.block_bases]]
        return ("ll", bases, list(got.shape) if hasattr(got, "shape") else None)

    def bank_conflicts(self, reg: Any, shared: Any, shape: Sequence[int], bits: int) -> Result:
        got = self.builder.get_shared_bank_conflicts(reg._to_ir(self.builder), shared._to_ir(self.builder),
                                                     list(shape), bits)
        return ("conflicts", int(got), None)


def to_gluon(spec: dict[str, Any]) -> Any:
    """The Gluon layout object a case spec describes (``kind`` names the Gluon class)."""
    import triton.experimental.gluon.language as ttgl  # optional: only the differential tests

    spec = dict(spec)
    kind = spec.pop("kind")
    if kind == "DotOperandLayout":
        spec["parent"] = to_gluon(spec["parent"])
    return getattr(ttgl, kind)(**spec)
