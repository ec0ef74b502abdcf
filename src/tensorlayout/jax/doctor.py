"""The padding doctor: each TPU buffer that pads, why, and the fix as JAX code, ranked.

:func:`diagnose` reads a module (TPU layouts as compiled, or the TPU default layout of
``generation`` for a CPU/GPU module): each entry parameter, output and temporary whose tiles
pad, the dimension and tile that cause it, and fixes in the order a user can apply them:
a size change ("round dim 1 from 300 to 384": the same bytes with no padding, or down to 256
to save), a layout (``Format(Layout(major_to_minor=...))`` for an argument or output,
``with_layout_constraint`` inside), a transpose, a reshape (a flatten included), each with the
bytes it saves. Parameters and outputs come first (what the caller controls).

With the ``jax`` extra and libtpu, :func:`doctor` compiles a function deviceless for TPU,
diagnoses it, recompiles it with each size change and parameter layout/reshape applied, and
puts ``compiled.memory_analysis()`` before and after beside the estimate.

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n  p = bf16[1000,125]{1,0:T(8,128)(2,1)} parameter(0)\\n"
...                  "  ROOT n = bf16[1000,125]{1,0:T(8,128)(2,1)} negate(p)\\n}")
>>> [(f.role, f.name, f.fixes[0].change) for f in diagnose(m).findings]
[('parameter 0', 'p', 'round dim 1 from 125 to 128'), ('output 0', 'n', 'round dim 1 from 125 to 128')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tensorlayout.core.intmath import round_up
from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import parse_module
from tensorlayout.hlo.model import HloInstruction, HloModule
from tensorlayout.jax import element_type_of
from tensorlayout.jax.memory import compiler_memory, source_info
from tensorlayout.xla.padding import Alternative, PaddingReport, binary_bytes, padding_report, tpu_shape
from tensorlayout.xla.shape import Shape
from tensorlayout.xla.sizes import array_size
from tensorlayout.xla.tpu import canonical_generation, default_shape

__all__ = ["Diagnosis", "Finding", "Fix", "Verification", "diagnose", "doctor", "tpu_compile"]

#: Buffers that alias another (no allocation of their own).
_ALIASING = frozenset({"bitcast", "get-tuple-element", "tuple", "after-all", "add-dependency",
                       "opt-barrier", "domain", "parameter", "constant"})
#: The order fixes are offered in (what the user can change most easily first).
_FIX_ORDER = {"size": 0, "layout": 1, "transpose": 2, "reshape": 3}
_ROLE_ORDER = {"parameter": 0, "output": 1, "temporary": 2}
#: A deviceless topology per generation (libtpu's names).
TOPOLOGIES = {"v5e": "v5e:2x2", "v6e": "v6e:2x2"}


@dataclass(frozen=True, slots=True)
class Fix:
    """One fix: ``kind`` (size, layout, transpose, reshape), what to change, the JAX code,
    and the bytes it saves (0 for a size change that turns the padding into real data)."""

    kind: str
    change: str
    code: str
    saved_bytes: int
    shape: Shape

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "change": self.change, "code": self.code,
                "saved_bytes": self.saved_bytes, "shape": self.shape.to_string(with_layout=True)}


@dataclass(frozen=True, slots=True)
class Finding:
    """One buffer that pads: its role (``parameter 0``, ``output 0``, ``temporary``), name,
    the op that made it and its source line, its padding report, and the fixes."""

    role: str
    name: str
    op_name: str
    source: str
    report: PaddingReport
    fixes: tuple[Fix, ...]

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why it pads, one line per padded dim."""
        return tuple(f"dim {d.dimension} (size {d.size}): tile {d.tile_size} pads it to {d.padded_size}"
                     for d in self.report.dimensions if d.dimension is not None and d.padded_size > d.size)

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "name": self.name, "op_name": self.op_name, "source": self.source,
                "reasons": list(self.reasons), **self.report.as_dict(),
                "fixes": [f.as_dict() for f in self.fixes]}


@dataclass(frozen=True, slots=True)
class Verification:
    """A fix recompiled: the compiler's numbers before and after, and the estimate."""

    change: str
    before: dict[str, int]
    after: dict[str, int] | None
    predicted_arguments: int
    predicted_outputs: int
    error: str = ""

    def disagreement(self) -> int | None:
        """Compiler's argument+output bytes after minus the estimate (None if not compiled)."""
        if self.after is None:
            return None
        return (self.after.get("argument_size_in_bytes", 0) + self.after.get("output_size_in_bytes", 0)
                - self.predicted_arguments - self.predicted_outputs)

    def as_dict(self) -> dict[str, Any]:
        return {"change": self.change, "before": self.before, "after": self.after,
                "predicted_argument_bytes": self.predicted_arguments,
                "predicted_output_bytes": self.predicted_outputs,
                "disagreement_bytes": self.disagreement(), "error": self.error}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """The findings of one module, ranked, and (from :func:`doctor`) the verifications."""

    module: str
    generation: str
    findings: tuple[Finding, ...]
    verifications: tuple[Verification, ...] = field(default=())

    def text(self, top: int = 10, fixes: int = 3) -> str:
        """The report as text: findings (at most ``top``) with their first ``fixes`` fixes, then
        the verifications (compiler before and after beside the estimate)."""
        out = [f"== {self.module}: {len(self.findings)} buffers pad on TPU {self.generation}"]
        for f in self.findings[:top]:
            r = f.report
            where = f"  {f.op_name}" if f.op_name else ""
            where += f" at {f.source}" if f.source else ""
            out.append(f"{f.role} {f.name}: {r.shape.to_string(with_layout=True)} "
                       f"{binary_bytes(r.allocated_bytes)} for {binary_bytes(r.logical_bytes)}{where}")
            out += [f"    {reason}" for reason in f.reasons]
            out += [f"    fix ({x.kind}): {x.change}"
                    + (f", saves {binary_bytes(x.saved_bytes)}" if x.saved_bytes else "")
                    + f"\n        {x.code}" for x in f.fixes[:fixes]]
        if len(self.findings) > top:
            out.append(f"and {len(self.findings) - top} more buffers (--top N, or --json)")
        out += [_verification_text(v) for v in self.verifications]
        return "\n".join(out)

    def as_dict(self) -> dict[str, Any]:
        return {"module": self.module, "generation": self.generation,
                "findings": [f.as_dict() for f in self.findings],
                "verifications": [v.as_dict() for v in self.verifications]}


def _verification_text(v: Verification) -> str:
    """One verification: the compiler's argument/output/temp bytes before and after, the estimate."""
    def stats(d: dict[str, int]) -> str:
        return (f"arguments {d.get('argument_size_in_bytes', 0)}, "
                f"outputs {d.get('output_size_in_bytes', 0)}, temporaries {d.get('temp_size_in_bytes', 0)}")
    head = f"verified ({v.change}): memory_analysis() before: {stats(v.before)}"
    if v.after is None:
        return f"{head}\n    does not compile: {v.error}"
    gap = v.disagreement()
    agree = "the estimate agrees" if gap == 0 else f"the estimate is off by {gap} bytes"
    return (f"{head}\n    after: {stats(v.after)}; estimated arguments {v.predicted_arguments}, "
            f"outputs {v.predicted_outputs}: {agree}")


def _roles(module: HloModule) -> Iterator[tuple[str, HloInstruction, int | None]]:
    """(role, instruction, tuple index) of the entry parameters, the outputs, the temporaries."""
    entry = module.entry
    for instr in entry.instructions:
        if instr.opcode == "parameter" and instr.parameter_number is not None:
            yield f"parameter {instr.parameter_number}", instr, None
    root = entry.root
    outputs = root.operands if root.opcode == "tuple" else (root,)
    for k, out in enumerate(outputs):
        if out.opcode != "parameter":
            yield f"output {k}", out, None
    done = {id(o) for o in outputs}
    for instr in entry.instructions:
        if instr.opcode not in _ALIASING and id(instr) not in done:
            yield "temporary", instr, None


def _size_fixes(report: PaddingReport, generation: str) -> Iterator[Fix]:
    """Round each padded dim up to its tile (no padding, same bytes) or down (fewer bytes)."""
    shape = report.shape
    for d in report.dimensions:
        if d.dimension is None or d.padded_size <= d.size:
            continue
        for new in (round_up(d.size, d.tile_size), d.size - d.size % d.tile_size):
            if new <= 0:
                continue
            dims = list(shape.dimensions)
            dims[d.dimension] = new
            changed = default_shape(shape.element_type, tuple(dims), generation=generation)
            saved = report.allocated_bytes - array_size(changed)
            note = "the same bytes, no padding" if new > d.size else f"saves {saved} bytes"
            yield Fix("size", f"round dim {d.dimension} from {d.size} to {new}",
                      f"# {note}: shape {tuple(dims)} instead of {shape.dimensions}", max(saved, 0), changed)


def _alternative_fix(alt: Alternative, role: str, report: PaddingReport) -> Fix:
    saved = report.allocated_bytes - alt.allocated_bytes
    layout = alt.shape.layout
    m2m = tuple(reversed(layout.minor_to_major)) if layout is not None else ()
    if alt.kind == "layout":
        tiling = ", ".join(str(t.dims) for t in layout.tiles) if layout is not None else ""
        lay = f"Layout(major_to_minor={m2m!r}, tiling=({tiling},))"
        where, _, k = role.partition(" ")
        entry = {"parameter": f"argument {k}'s entry of jax.jit(f, in_shardings=...)",
                 "output": f"output {k}'s entry of jax.jit(f, out_shardings=...)"}.get(where)
        code = f"Format({lay}, sharding)  # {entry}" if entry else f"y = with_layout_constraint(y, {lay})"
    elif alt.kind == "transpose":
        code = alt.change.split(": ", 1)[-1]
    else:
        code = "x = x." + alt.change.split(": ", 1)[-1]
    return Fix(alt.kind, alt.change.split(": ", 1)[0], code, saved, alt.shape)


#: A size rounded up by at most this factor is offered first (the padding becomes real data).
SMALL_ROUNDING = 1.25


def _rank(fix: Fix) -> tuple[int, int, int]:
    """Small round-ups first ("round dim 1 from 125 to 128"), then by bytes saved, then by kind."""
    small = False
    if fix.kind == "size":
        words = fix.change.split()  # round dim D from OLD to NEW
        old, new = int(words[-3]), int(words[-1])
        small = old < new <= old * SMALL_ROUNDING
    return (0 if small else 1, -fix.saved_bytes, _FIX_ORDER[fix.kind])


def _finding(role: str, instr: HloInstruction, shape: Shape, sources: dict[str, Any],
             generation: str) -> Finding | None:
    report = padding_report(shape, generation=generation, limit=6)
    if report.waste <= 0:
        return None
    fixes = list(_size_fixes(report, generation))
    fixes += [_alternative_fix(a, role, report) for a in report.alternatives]
    fixes.sort(key=_rank)
    src = sources.get(instr.name)
    return Finding(role, instr.name, src.op_name if src else "", src.source if src else "",
                   report, tuple(fixes))


def diagnose(module: HloModule, *, generation: str | None = None) -> Diagnosis:
    """Every buffer of the entry computation that pads on TPU (untiled shapes get the TPU
    default layout of ``generation``), ranked: parameters, outputs, then temporaries, each
    group by padding bytes."""
    gen = canonical_generation(generation)
    sources = source_info(module)
    found = []
    for role, instr, _ in _roles(module):
        if not instr.shape.is_array:
            continue
        try:
            shape = tpu_shape(instr.shape, generation=gen)
            finding = _finding(role, instr, shape, sources, gen)
        except TensorLayoutError:
            continue  # no TPU layout for it (1-bit, '?'): nothing to advise
        if finding is not None:
            found.append(finding)
    found.sort(key=lambda f: (_ROLE_ORDER[f.role.split()[0]], -f.report.waste, f.name))
    return Diagnosis(module.name, gen, tuple(found))


def tpu_compile(fn: Callable[..., Any], args: Sequence[Any], generation: str,
                in_shardings: Any = None) -> Any:
    """``jax.jit(fn)`` compiled deviceless for one chip of a TPU ``generation`` (needs libtpu);
    ``args`` are arrays or ``ShapeDtypeStruct``s (their shapes and dtypes are used)."""
    from jax.experimental import topologies
    from jax.sharding import SingleDeviceSharding

    import jax

    topology = topologies.get_topology_desc(platform="tpu", topology_name=TOPOLOGIES[generation])
    sharding = SingleDeviceSharding(topology.devices[0])
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding) for a in args]
    jitted = jax.jit(fn) if in_shardings is None else jax.jit(fn, in_shardings=in_shardings(sharding))
    return jitted.trace(*specs).lower(lowering_platforms=("tpu",)).compile()


def _resized(args: Sequence[Any], old: int, new: int) -> list[Any]:
    import jax

    return [jax.ShapeDtypeStruct(tuple(new if d == old else d for d in a.shape), a.dtype) for a in args]


def _predicted(fn: Callable[..., Any], args: Sequence[Any], generation: str) -> tuple[int, int]:
    """Argument and output bytes of ``fn(*args)`` under the TPU default layouts."""
    import jax

    outs = jax.tree_util.tree_leaves(jax.eval_shape(fn, *args))
    size = lambda a: array_size(default_shape(element_type_of(a.dtype), tuple(a.shape),  # noqa: E731
                                              generation=generation))
    return sum(map(size, args)), sum(map(size, outs))


def _verify_sizes(fn: Callable[..., Any], args: Sequence[Any], diagnosis: Diagnosis,
                  before: dict[str, int]) -> Iterator[Verification]:
    """Recompile ``fn`` with each size change of a parameter applied to every argument dim of
    that size (a model dimension such as a hidden size)."""
    seen = set()
    for finding in diagnosis.findings:
        if not finding.role.startswith("parameter"):
            continue
        for fix in finding.fixes:
            if fix.kind != "size":
                continue
            old, new = (int(w) for w in fix.change.split()[-3::2])
            if (old, new) in seen:
                continue
            seen.add((old, new))
            resized = _resized(args, old, new)
            change = f"every argument dim of size {old} -> {new}"
            try:
                args_b, outs_b = _predicted(fn, resized, diagnosis.generation)
                after = compiler_memory(tpu_compile(fn, resized, diagnosis.generation))
            except Exception as err:  # a size the program cannot take: reported, not raised
                yield Verification(change, before, None, 0, 0, str(err).split("\n")[0][:200])
                continue
            yield Verification(change, before, after, args_b, outs_b)


def _reshaped(fn: Callable[..., Any], k: int, shape: tuple[int, ...]) -> Callable[..., Any]:
    """``fn`` taking argument ``k`` reshaped (it is reshaped back to ``shape`` first)."""
    def wrapped(*a: Any) -> Any:
        return fn(*a[:k], a[k].reshape(shape), *a[k + 1:])
    return wrapped


def _verify_reshapes(fn: Callable[..., Any], args: Sequence[Any], diagnosis: Diagnosis,
                     before: dict[str, int]) -> Iterator[Verification]:
    """Recompile ``fn`` taking each parameter in its best reshape (reshaped back inside)."""
    import jax

    for finding in diagnosis.findings:
        if not finding.role.startswith("parameter"):
            continue
        fix = next((f for f in finding.fixes if f.kind == "reshape" and f.saved_bytes > 0), None)
        k = int(finding.role.split()[1])
        if fix is None or k >= len(args):
            continue
        new_args = list(args)
        new_args[k] = jax.ShapeDtypeStruct(fix.shape.dimensions, args[k].dtype)
        wrapped = _reshaped(fn, k, tuple(args[k].shape))
        change = f"argument {k} ({finding.name}) passed as x.{fix.code.split('x.', 1)[-1]}"
        try:
            args_b, outs_b = _predicted(wrapped, new_args, diagnosis.generation)
            after = compiler_memory(tpu_compile(wrapped, new_args, diagnosis.generation))
        except Exception as err:  # reported, not raised: the estimate stands unverified
            yield Verification(change, before, None, 0, 0, str(err).split("\n")[0][:200])
            continue
        yield Verification(change, before, after, args_b, outs_b)


def doctor(fn: Callable[..., Any], *args: Any, tpu: str = "v6e", verify: bool = True) -> Diagnosis:
    """Compile ``fn(*args)`` deviceless for TPU ``tpu`` (``args``: arrays or ``ShapeDtypeStruct``s,
    one per parameter), diagnose its buffers, and (``verify``) recompile it with each size
    change and with each parameter in its best reshape, to compare ``memory_analysis()`` with
    the estimate."""
    generation = canonical_generation(tpu)
    compiled = tpu_compile(fn, args, generation)
    diagnosis = diagnose(parse_module(compiled.as_text()), generation=generation)
    if not verify:
        return diagnosis
    before = compiler_memory(compiled)
    args_b, outs_b = _predicted(fn, args, generation)
    checks = (Verification("as written", before, before, args_b, outs_b),
              *_verify_sizes(fn, args, diagnosis, before), *_verify_reshapes(fn, args, diagnosis, before))
    return Diagnosis(diagnosis.module, generation, diagnosis.findings, checks)
