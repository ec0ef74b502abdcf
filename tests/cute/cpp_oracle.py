"""CuTe's C++ layout algebra as a test oracle: our cases compiled host-only against CuTe's headers.

CuTe's algebra needs static integers (``left_inverse``, ``complement`` of rank > 1 static-assert
otherwise), so each case becomes one line of generated C++ with ``Int<N>`` values; the program
prints CuTe's answers. A case C++ rejects at compile time (a static assertion) is answered
``None``: the compiler's error lines name the generated lines, those cases are dropped and the
rest rebuilt. Answers are cached in a temporary folder keyed by the source, so a test session
compiles a given case list at most once. The headers come from the ``nvidia-cutlass`` wheel
(``cutlass_library/source/include``); everything skips when they or ``g++`` are missing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tensorlayout.cute import Layout
from tensorlayout.cute.int_tuple import _

HERE = Path(__file__).parent
CACHE = Path(tempfile.gettempdir()) / "tensorlayout-cute-oracle"
CUDA_INCLUDES = ("/usr/local/cuda/include", "/usr/local/cuda/include/cccl")
OPS_2 = ("composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
         "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
         "raked_product")


def cute_include() -> Path | None:
    """The CuTe headers shipped in the nvidia-cutlass wheel, if installed."""
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    inc = Path(next(iter(spec.submodule_search_locations))) / "source" / "include"
    return inc if (inc / "cute" / "layout.hpp").exists() else None


def compiler() -> str | None:
    return shutil.which(os.environ.get("CXX", "g++"))


def available() -> bool:
    return cute_include() is not None and compiler() is not None


def _int_tuple(t: Any, make: str) -> str:
    if isinstance(t, tuple):
        return f"cute::{make}(" + ",".join(_int_tuple(x, make) for x in t) + ")"
    return f"cute::Int<{int(t)}>{{}}"


def layout_expr(layout: Layout) -> str:
    """A static CuTe expression for ``layout``."""
    return (f"cute::make_layout({_int_tuple(layout.shape, 'make_shape')},"
            f"{_int_tuple(layout.stride, 'make_stride')})")


def tiler_expr(tiler: Any) -> str:
    if tiler is _ or tiler is None:
        return "cute::_"
    if isinstance(tiler, Layout):
        return layout_expr(tiler)
    if isinstance(tiler, tuple):
        return "cute::make_tile(" + ",".join(tiler_expr(x) for x in tiler) + ")"
    return f"cute::Int<{int(tiler)}>{{}}"


def case_expr(op: str, args: Sequence[Any]) -> str:
    """The C++ call for one case: ``op`` with a layout and a tiler / cotarget, or a layout alone."""
    if op in ("left_inverse", "right_inverse", "coalesce"):
        return f"cute::{op}({layout_expr(args[0])})"
    if op == "complement":
        return f"cute::complement({layout_expr(args[0])},cute::Int<{int(args[1])}>{{}})"
    if op in OPS_2:
        return f"cute::{op}({layout_expr(args[0])},{tiler_expr(args[1])})"
    raise ValueError(f"no C++ form for {op}")


def _source(exprs: list[str | None]) -> tuple[str, dict[int, int]]:
    head = ['#include "cute_oracle.hpp"']
    line_of: dict[int, int] = {}
    body = []
    for k, e in enumerate(exprs):
        if e is None:
            continue
        call = e[1:] if e.startswith("!") else f"tl_oracle::show({k}, {e});"
        head.append(f"void f{k}() {{ {call.replace('@ID', str(k))} }}")
        line_of[len(head)] = k
        body.append(f"  f{k}();")
    return "\n".join(head + ["int main() {"] + body + ["  return 0;", "}", ""]), line_of


def _compile(src: str, work: Path) -> tuple[bool, str]:
    (work / "gen.cpp").write_text(src)
    inc = cute_include()
    cmd = [str(compiler()), "-std=c++17", "-O0", "-w", f"-I{HERE}", f"-I{inc}"]
    cmd += [f"-I{d}" for d in CUDA_INCLUDES if Path(d).exists()]
    cmd += [str(work / "gen.cpp"), "-o", str(work / "gen")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    return proc.returncode == 0, proc.stderr


def int_tuple_expr(t: Any) -> str:
    """A static CuTe IntTuple (``Int<N>`` leaves) for ``t``."""
    return _int_tuple(t, "make_tuple")


def run(cases: Sequence[tuple[str, Sequence[Any]]]) -> list[str | None]:
    """CuTe's printed answer for each ``(op, args)`` case, or None where C++ does not compile it."""
    return run_exprs([case_expr(op, args) for op, args in cases])


def run_exprs(cases: Sequence[str]) -> list[str | None]:
    """CuTe's printed value of each C++ expression (``tl_oracle::show``), or None where C++
    does not compile it. A case starting with ``!`` is a statement instead, ``@ID`` standing for
    its case number (a call of one of the printing helpers of cute_oracle.hpp)."""
    exprs: list[str | None] = list(cases)

    def answer() -> list[str | None]:
        answers: list[str | None] = [None] * len(exprs)
        for line in compile_and_run(exprs, _source, "CuTe oracle").splitlines():
            k, text = line.split(" ", 1)
            answers[int(k)] = text
        return answers
    return cached_answers("", exprs, answer)


def cached_answers(prefix: str, cases: Sequence[str | None], answer: Callable[[], list[Any]]) -> list[Any]:
    """``answer()``, cached as JSON in :data:`CACHE` (file name ``prefix`` + a hash of ``cases``
    and of CuTe's include dir)."""
    key = hashlib.sha256(("\n".join(map(str, cases)) + str(cute_include())).encode()).hexdigest()[:20]
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / f"{prefix}{key}.json"
    if cached.exists():
        return json.loads(cached.read_text())  # type: ignore[no-any-return]
    answers = answer()
    cached.write_text(json.dumps(answers))
    return answers


def compile_and_run(cases: list[str | None], source: Callable[[list[str | None]], tuple[str, dict[int, int]]],
                    what: str, rounds: int = 8) -> str:
    """Build ``source(cases)`` (the program text and the case on each line) and return what it
    prints; each case whose line C++ rejects is set to None in ``cases`` and the build retried."""
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        work = Path(tmp)
        for _round in range(rounds):
            src, line_of = source(cases)
            ok, err = _compile(src, work)
            if ok:
                break
            bad = {line_of[int(n)] for n in re.findall(r"gen\.cpp:(\d+):", err) if int(n) in line_of}
            if not bad:
                raise RuntimeError(f"the {what} does not compile:\n" + err[-4000:])
            for k in bad:
                cases[k] = None
        else:
            raise RuntimeError(f"the {what} still fails after dropping rejected cases")
        run = subprocess.run([str(work / "gen")], capture_output=True, text=True, timeout=600, check=True)
    return run.stdout
