"""Per-class disagreement counts of the long differential runs (issue 15's closing table).

    python -m tests.differential_counts xla --n 22000        # shape text vs jaxlib's parser
    python -m tests.differential_counts hlo --n 5000         # mutated HLO modules vs jaxlib
    python -m tests.differential_counts pycute --n 84000     # CuTe algebra vs pycute + definitions
    python -m tests.differential_counts cpp --n 3000         # CuTe algebra vs CuTe's C++
    python -m tests.differential_counts dsl --n 8200 --dsl-path DIR   # vs the CuTe DSL (CPU)
    python -m tests.differential_counts algebra --n 84000    # CuTe algebra: non-library exceptions

Each run prints one line per class: how many inputs fell in it and who is right there. The
inputs are the harnesses' own generators (tests/xla, tests/hlo, tests/cute); this module only
sorts the answers into classes, it asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from typing import Any

from tensorlayout.cute import Layout, _
from tensorlayout.errors import ParseError, TensorLayoutError
from tensorlayout.hlo import parse_module
from tensorlayout.xla import parse_shape

from .cute import cpp_oracle, differential
from .cute.test_fuzz import _calls, _layout
from .hlo.test_xla_differential import XlaHlo, corpus_texts, mutants
from .xla.test_xla_differential import KNOWN_DIFFERENCES, comparable, differential_text
from .xla.xla_oracle import XlaOracle

Counts = collections.Counter[str]


def _norm(message: str) -> str:
    """An error message with its numbers and quoted text blanked, so that messages group."""
    message = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message.splitlines()[0] if message else "")
    return re.sub(r"\d+", "N", message)[:110]


# --- XLA shape text -------------------------------------------------------------------------

def _ours_shape(text: str) -> str | TensorLayoutError:
    try:
        return str(parse_shape(text))
    except TensorLayoutError as err:
        return err


def xla_class(text: str, xla: str | None) -> str | None:
    """The class of one shape text's disagreement with XLA (None when both agree)."""
    mine = _ours_shape(text)
    if isinstance(mine, TensorLayoutError):
        if xla is None or xla == "crash":
            return None
        return "XLA accepts, we reject: " + _norm(str(mine))
    if xla == mine:
        return None
    if xla == "crash":
        return "XLA aborts, we accept"
    if xla is not None:
        return "both accept, printed differently"
    if re.search(r"\d{20,}", text) or re.search(r"1844674407370955161[6-9]", text):
        return "XLA rejects, we accept: dimension >= 2^64"
    if "SC(" in text:
        return "XLA rejects, we accept: split config"
    return "XLA rejects, we accept: " + ("tuple element" if text.startswith("(") else "array")


def _known(text: str) -> str:
    """Which deliberate difference (tests/xla/test_xla_differential.py) ``text`` falls under."""
    if "/" in text or "\n" in text:
        return "comment or line break: not embeddable in a module line"
    mine = _ours_shape(text)
    found = [k for k in KNOWN_DIFFERENCES if isinstance(mine, ParseError) and k in mine.expected]
    return found[0] if found else "?"


def _verdict(xla: str | None) -> str:
    return "rejects" if xla is None else "aborts" if xla == "crash" else "accepts"


def run_xla(seed: int, n: int) -> tuple[Counts, dict[str, str]]:
    counts: Counts = collections.Counter()
    first: dict[str, str] = {}
    oracle = XlaOracle()
    try:
        for k in range(seed, seed + n):
            text = differential_text(k)
            xla = oracle(text)
            if not comparable(text):
                counts[f"known difference ({_known(text)}): XLA {_verdict(xla)}"] += 1
                continue
            cls = xla_class(text, xla)
            counts[cls or ("agree (both reject)" if xla in (None, "crash") else "agree (same text)")] += 1
            if cls:
                first.setdefault(cls, f"{k}: {text!r} -> XLA {xla!r}, ours {_ours_shape(text)!s}")
    finally:
        oracle.close()
    return counts, first


# --- HLO modules ----------------------------------------------------------------------------

def _xla_reason(message: str) -> str:
    """XLA's parse error without its location prefix."""
    found = re.search(r"\d+:\d+: error: (.*)", message)
    return _norm(found.group(1) if found else message).split(". Allowed")[0]


def structural_mutants(seed: int, count: int) -> list[str]:
    """Issue 15 (d) edits of corpus modules: two instructions joined on one line, an instruction
    renamed to a type name, two instruction lines swapped (an operand used before its definition)."""
    rng = random.Random(seed)
    texts = corpus_texts()
    out = []
    for text in (rng.choice(texts) for _k in range(count)):
        lines = text.split("\n")
        body = [k for k, ln in enumerate(lines) if re.match(r"\s*(ROOT\s+)?%?[\w.\-]+ = ", ln)]
        if len(body) < 2:
            out.append(text)
            continue
        k = rng.choice(body[:-1])
        edit = rng.randrange(3)
        if edit == 0:
            lines[k:k + 2] = [lines[k] + rng.choice((" ", "", "  ")) + lines[k + 1].lstrip()]
        elif edit == 1:
            name = lines[k].split(" = ")[0].split()[-1]
            new = rng.choice(("s1", "f32", "pred", "u8", "token", "bf16"))
            lines = [re.sub(rf"(?<![\w.%-]){re.escape(name)}(?![\w.-])", new, ln) for ln in lines]
        else:
            j = rng.choice(body)
            lines[k], lines[j] = lines[j], lines[k]
        out.append("\n".join(lines))
    return out


def run_hlo(seed: int, n: int, generate: Callable[[int, int], list[str]]) -> tuple[Counts, dict[str, str]]:
    counts: Counts = collections.Counter()
    first: dict[str, str] = {}
    xla = XlaHlo()
    try:
        for k, text in enumerate(generate(seed, n)):
            theirs = xla.error(text)
            try:
                parse_module(text)
                mine: str | None = None
            except TensorLayoutError as err:
                mine = str(err)
            if theirs == "crash":
                cls = "XLA aborts" + (", we accept" if mine is None else ", we reject")
            elif theirs is None:
                cls = "agree (both accept)" if mine is None else "XLA accepts, we reject: " + _norm(mine)
            else:
                cls = "agree (both reject)" if mine is not None else \
                    "XLA rejects, we accept: " + _xla_reason(theirs)
            counts[cls] += 1
            first.setdefault(cls, f"input {k}: {text!r}"[:3000])
    finally:
        xla.close()
    return counts, first


# --- CuTe -----------------------------------------------------------------------------------

PYCUTE_OPS = ("composition", "complement", "left_inverse", "right_inverse", "logical_divide",
              "zipped_divide", "tiled_divide", "logical_product", "zipped_product", "tiled_product")


def _ours(op: str, args: tuple[Any, ...]) -> Layout | Exception:
    try:
        return differential.ours(op, args)
    except Exception as err:  # a non-library exception is itself a finding
        return err


def _to_pycute(x: Any, pycute: Any) -> Any:
    if isinstance(x, Layout):
        return pycute.Layout(x.shape, x.stride)
    if x is _:
        return None
    if isinstance(x, tuple):
        return tuple(_to_pycute(y, pycute) for y in x)
    return x


def _pycute(op: str, args: tuple[Any, ...], pycute: Any) -> Layout | None:
    try:
        r = getattr(pycute, op)(*(_to_pycute(a, pycute) for a in args))
        return Layout(r.shape, r.stride)
    except Exception:  # pycute asserts or fails on inputs it does not handle
        return None


def _judge(op: str, args: tuple[Any, ...], r: Layout | None) -> bool:
    try:
        return r is not None and differential.correct(op, args, r)
    except TensorLayoutError:
        return False


def pycute_class(op: str, args: tuple[Any, ...], pycute: Any) -> tuple[str, bool]:
    """The class of one case, and whether C++ should settle it (a disagreement)."""
    mine = _ours(op, args)
    if isinstance(mine, Exception) and not isinstance(mine, TensorLayoutError):
        return f"{op}: non-library exception {type(mine).__name__}", False
    ok = not isinstance(mine, Exception) and _judge(op, args, mine)
    if not isinstance(mine, Exception) and not ok:
        return f"{op}: our answer breaks the definition", True
    if op not in PYCUTE_OPS:
        return f"{op}: we answer, definition holds" if ok else f"{op}: we raise (no pycute)", False
    theirs = _pycute(op, args, pycute)
    py_ok = _judge(op, args, theirs)
    if isinstance(mine, Exception):
        return (f"{op}: we raise, pycute answers correctly", True) if py_ok else (
            f"{op}: agree (we raise, pycute fails or is wrong)", False)
    if not py_ok:
        return f"{op}: we are right, pycute fails or is wrong", False
    assert theirs is not None and not isinstance(mine, Exception)
    if str(mine) == str(theirs):
        return f"{op}: agree (same layout)", False
    if differential.values(mine).tolist() == differential.values(theirs).tolist():
        return f"{op}: both right, same function, different shape", True
    return f"{op}: both right, different functions", True


def run_pycute(seed: int, n: int, settle: int) -> tuple[Counts, dict[str, str]]:
    """``settle``: how many disagreements per class are also asked of CuTe's C++."""
    import pycute

    counts: Counts = collections.Counter()
    first: dict[str, str] = {}
    ask: list[tuple[str, tuple[Any, ...]]] = []
    for op, args in differential.random_cases(seed, n):
        cls, disputed = pycute_class(op, args, pycute)
        counts[cls] += 1
        first.setdefault(cls, f"{op}({', '.join(map(str, args))}) = {_ours(op, args)}, "
                              f"pycute {_pycute(op, args, pycute) if op in PYCUTE_OPS else '-'}")
        if disputed and counts[cls] <= settle:
            ask.append((op, args))
    settle_with_cpp(ask, counts)
    return counts, first


def settle_with_cpp(ask: list[tuple[str, tuple[Any, ...]]], counts: Counts) -> None:
    """Ask CuTe's C++ about the disputed cases; its verdicts are added as indented classes."""
    if ask and cpp_oracle.available():
        for cls, k in cpp_verdicts(ask).items():
            counts["  C++ on the disputed sample: " + cls] += k


def cpp_class(op: str, args: tuple[Any, ...], cpp: str | None) -> str:
    """The class of our answer against C++'s (who is right is decided by the definitions)."""
    mine = _ours(op, args)
    if isinstance(mine, Exception) and not isinstance(mine, TensorLayoutError):
        return f"{op}: non-library exception {type(mine).__name__}"
    if cpp is None:
        return f"{op}: agree (C++ rejects, we raise)" if isinstance(mine, Exception) else \
            f"{op}: C++ rejects at compile time, we answer"
    cpp_ok = _judge(op, args, Layout.parse(cpp))
    if not cpp_ok:
        return f"{op}: agree (C++ wrong, we raise)" if isinstance(mine, Exception) else \
            f"{op}: C++ wrong, we answer" + (" (correctly)" if _judge(op, args, mine) else " (wrongly)")
    if isinstance(mine, Exception):
        return f"{op}: C++ right, we raise"
    same = str(mine) == cpp.replace("_", "")
    return f"{op}: agree (same layout)" if same else f"{op}: C++ right, we differ"


def cpp_verdicts(cases: list[tuple[str, tuple[Any, ...]]], chunk: int = 400) -> Counts:
    counts: Counts = collections.Counter()
    for k in range(0, len(cases), chunk):
        part = cases[k:k + chunk]
        for (op, args), cpp in zip(part, cpp_oracle.run(part)):
            counts[cpp_class(op, args, cpp)] += 1
    return counts


def run_cpp(seed: int, n: int) -> tuple[Counts, dict[str, str]]:
    cases = differential.random_cases(seed, n)
    counts: Counts = collections.Counter()
    first: dict[str, str] = {}
    for k in range(0, len(cases), 400):
        part = cases[k:k + 400]
        for (op, args), cpp in zip(part, cpp_oracle.run(part)):
            cls = cpp_class(op, args, cpp)
            counts[cls] += 1
            first.setdefault(cls, f"{op}({', '.join(map(str, args))}) = {_ours(op, args)}, C++ {cpp}")
        print(f"... {k + len(part)} cases", file=sys.stderr, flush=True)
    return counts, first


def _to_dsl(x: Any, dsl: Any) -> Any:
    if isinstance(x, Layout):
        return dsl.make_layout(x.shape, stride=x.stride)
    if x is _:
        return None
    if isinstance(x, tuple):
        return tuple(_to_dsl(y, dsl) for y in x)
    return x


def dsl_worker(seed: int, n: int, path: str) -> None:
    """Child process: for each ``start end`` line on stdin, trace those cases in one
    ``@cute.jit`` function (static layouts are computed at trace time, on the CPU) and print
    ``@@ <json answer>`` per case (None where the DSL raises)."""
    sys.path[:0] = [path, f"{path}/nvidia_cutlass_dsl/dsl_packages"]
    import cutlass.cute as dsl

    cases = differential.random_cases(seed, n)
    for line in sys.stdin:
        start, end = map(int, line.split())

        def each(start: int = start, end: int = end) -> None:
            for op, args in cases[start:end]:
                try:
                    answer: str | None = str(getattr(dsl, op)(*(_to_dsl(a, dsl) for a in args)))
                except Exception:
                    answer = None
                print("@@ " + json.dumps(answer), flush=True)

        dsl.jit(lambda: each())()


def dsl_answers(seed: int, n: int, path: str, chunk: int = 200) -> list[str | None]:
    """The DSL's answer to each case, ``"crash"`` where it killed the worker (then restarted)."""
    answers: list[str | None] = []
    proc: subprocess.Popen[str] | None = None
    cmd = [sys.executable, "-m", "tests.differential_counts", "dsl-worker", "--seed", str(seed),
           "--n", str(n), "--dsl-path", path]
    while len(answers) < n:
        if proc is None:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        end = min(n, len(answers) + chunk)
        proc.stdin.write(f"{len(answers)} {end}\n")
        proc.stdin.flush()
        while len(answers) < end:
            line = proc.stdout.readline()
            if not line:
                answers.append("crash")
                proc.wait()
                proc = None
                break
            if line.startswith("@@ "):
                answers.append(json.loads(line[3:]))
    if proc is not None and proc.stdin is not None:
        proc.stdin.close()
        proc.wait()
    return answers


def run_dsl(seed: int, n: int, path: str, settle: int) -> tuple[Counts, dict[str, str]]:
    cases = differential.random_cases(seed, n)
    counts: Counts = collections.Counter()
    first: dict[str, str] = {}
    ask = []
    for (op, args), answer in zip(cases, dsl_answers(seed, n, path)):
        cls = f"{op}: the DSL process crashed" if answer == "crash" else \
            cpp_class(op, args, answer).replace("C++", "DSL")
        counts[cls] += 1
        first.setdefault(cls, f"{op}({', '.join(map(str, args))}) = {_ours(op, args)}, DSL {answer}")
        if "agree" not in cls and counts[cls] <= settle:
            ask.append((op, args))
    settle_with_cpp(ask, counts)
    return counts, first


def run_algebra(seed: int, n: int) -> tuple[Counts, dict[str, str]]:
    """tests/cute/test_fuzz's random calls (zero extents, empty layouts, tilers with 0 and `_`)."""
    rng = random.Random(seed)
    counts: Counts = collections.Counter()
    first: dict[str, str] = {}
    for k in range(n):
        a, b = _layout(rng), _layout(rng)
        calls = _calls(rng, a, b)
        pick = rng.randrange(len(calls))
        try:
            calls[pick]()  # type: ignore[operator]
            cls = "answer"
        except TensorLayoutError:
            cls = "library error"
        except Exception as err:
            cls = f"non-library exception {type(err).__name__} (call {pick})"
            first.setdefault(cls, f"{k}: a={a}, b={b}: {err}")
        counts[cls] += 1
    return counts, first


def show(title: str, counts: Counts, first: dict[str, str]) -> None:
    print(f"## {title}: {sum(v for k, v in counts.items() if not k.startswith(' '))} inputs")
    for cls, k in sorted(counts.items()):
        print(f"{k:>8}  {cls}")
    print("first input of each disagreement class:")
    for cls, text in sorted(first.items()):
        if not cls.split(": ")[-1].startswith("agree") and "agree (" not in cls:
            print(f"  [{cls}] {text[:600]}")


def main(argv: Iterable[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("which", choices=("xla", "hlo", "hlo-structure", "pycute", "cpp", "dsl", "dsl-worker",
                                      "algebra"))
    ap.add_argument("--dsl-path", default="", help="where `pip install --target` put nvidia-cutlass-dsl")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--settle", type=int, default=30, help="disputed cases per class asked of C++")
    a = ap.parse_args(list(argv) if argv is not None else None)
    seeds = {"xla": 15_000_000, "hlo": 11, "hlo-structure": 12, "pycute": 160, "cpp": 100, "dsl": 200,
             "algebra": 1700}
    seed = seeds.get(a.which, 0) if a.seed is None else a.seed
    if a.which == "dsl-worker":
        dsl_worker(seed, a.n, a.dsl_path)
        return
    if a.which == "xla":
        result = run_xla(seed, a.n)
    elif a.which == "hlo":
        result = run_hlo(seed, a.n, mutants)
    elif a.which == "hlo-structure":
        result = run_hlo(seed, a.n, structural_mutants)
    elif a.which == "pycute":
        result = run_pycute(seed, a.n, a.settle)
    elif a.which == "cpp":
        result = run_cpp(seed, a.n)
    elif a.which == "dsl":
        result = run_dsl(seed, a.n, a.dsl_path, a.settle)
    else:
        result = run_algebra(seed, a.n)
    show(f"{a.which} (seed {seed})", *result)


if __name__ == "__main__":
    main()
