"""Memory as the compiler sees it: XLA's buffer assignment of a dumped module, read back.

XLA writes, next to each optimized module of an ``--xla_dump_to`` directory,
``…-buffer-assignment.txt`` (every allocation: its size, whether it holds a parameter, the
output or temporaries, its memory space ``color``, and the HLO values placed in it with their
shapes, sizes and offsets) and ``…-live-range.txt`` (the schedule and each value's live
range). :func:`parse_buffer_assignment` reads the first, :func:`parse_live_ranges` the
second; :func:`memory_report` puts them beside the module (each value's ``op_name`` and
source line) and, with ``tpu=True``, gives each value the TPU default layout of a generation
to estimate what the same program takes there.

>>> text = '''BufferAssignment:
... allocation 0: size 64, parameter 0, shape |f32[8,2]| at ShapeIndex {}:
...  value: <12 param @0> (size=64,offset=0): f32[8,2]{1,0}
... allocation 1: size 8, output shape is |f32[2]|, maybe-live-out:
...  value: <14 all-reduce @0> (size=8,offset=0): f32[2]{0}
... '''
>>> [(a.index, a.kind, a.size, a.values[0].instruction) for a in parse_buffer_assignment(text)]
[(0, 'parameter', 64, 'param'), (1, 'output', 8, 'all-reduce')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tensorlayout.errors import ParseError, TensorLayoutError
from tensorlayout.hlo.model import HloModule
from tensorlayout.xla.padding import tpu_shape
from tensorlayout.xla.shape import Shape, parse_shape
from tensorlayout.xla.sizes import array_size

__all__ = [
    "Allocation",
    "BufferValue",
    "MemoryReport",
    "SourceInfo",
    "compiler_memory",
    "memory_report",
    "parse_buffer_assignment",
    "parse_live_ranges",
    "source_info",
]

_ALLOCATION = re.compile(r"allocation (\d+): size (\d+)(.*?):?\s*$")
_VALUE = re.compile(r"\s*value: <(\d+) (\S+?)(\{[\d,]*\})? @(\d+)> \(size=(\d+),offset=(\d+)\): (.+?)\s*$")
_PARAMETER = re.compile(r"parameter (\d+)")
_COLOR = re.compile(r"color (\d+)")
_LIVE = re.compile(r"\s*(\S+?)(\{[\d,]*\}):(\d+)-(\d+)\s*$")
#: Allocation kinds, by the words XLA prints after the size (the first that matches).
_KINDS = (("parameter", "parameter"), ("output", "output shape"), ("constant", "constant"),
          ("thread-local", "thread-local"), ("temporary", "preallocated-temp"))


@dataclass(frozen=True, slots=True)
class BufferValue:
    """One HLO value placed in an allocation: the instruction (and tuple index) defining it."""

    id: int
    instruction: str
    index: str
    size: int
    offset: int
    shape: Shape | None


@dataclass(frozen=True, slots=True)
class Allocation:
    """One buffer allocation: ``kind`` is parameter, output, constant, thread-local,
    temporary or other; ``memory_space`` is its color (0 = default/HBM)."""

    index: int
    size: int
    kind: str
    parameter: int | None
    memory_space: int
    values: tuple[BufferValue, ...]


def _kind(rest: str) -> str:
    return next((kind for kind, words in _KINDS if words in rest), "other")


def _value(line: str, text: str, at: int) -> BufferValue:
    m = _VALUE.match(line)
    if m is None:
        raise ParseError(text, at, "a value line ' value: <id name @pos> (size=N,offset=N): shape'")
    try:
        shape: Shape | None = parse_shape(m.group(7))
    except TensorLayoutError:
        shape = None  # a shape this library cannot read keeps its size only
    return BufferValue(int(m.group(1)), m.group(2), m.group(3) or "{}", int(m.group(5)),
                       int(m.group(6)), shape)


def parse_buffer_assignment(text: str) -> tuple[Allocation, ...]:
    """The allocations of an XLA ``…-buffer-assignment.txt`` file (its first section)."""
    out: list[Allocation] = []
    head: tuple[int, int, str] | None = None
    values: list[BufferValue] = []
    at = 0
    for line in text.splitlines(keepends=True):
        m = _ALLOCATION.match(line)
        if m is not None:
            if head is not None:
                out.append(_allocation(head, values))
            head, values = (int(m.group(1)), int(m.group(2)), m.group(3)), []
        elif line.lstrip().startswith("value:"):
            if head is None:
                raise ParseError(text, at, "an 'allocation N: size M' line before its values")
            values.append(_value(line, text, at))
        elif head is not None and line.strip() and not line.startswith(" "):
            break  # the next section (Total bytes used, Used values, …)
        at += len(line)
    if head is not None:
        out.append(_allocation(head, values))
    if not out and "allocation" not in text:
        raise ParseError(text, 0, "an XLA buffer assignment ('BufferAssignment:' then allocations)")
    return tuple(out)


def _allocation(head: tuple[int, int, str], values: list[BufferValue]) -> Allocation:
    index, size, rest = head
    param = _PARAMETER.search(rest)
    color = _COLOR.search(rest)
    return Allocation(index, size, _kind(rest), int(param.group(1)) if param else None,
                      int(color.group(1)) if color else 0, tuple(values))


def parse_live_ranges(text: str) -> dict[str, tuple[int, int]]:
    """``{value name with index: (first, last schedule step)}`` from ``…-live-range.txt``.

    >>> parse_live_ranges("HloLiveRange (max 3):\\n  BufferLiveRange:\\n    x.1{}:0-3\\n")
    {'x.1{}': (0, 3)}
    """
    out = {}
    for line in text.splitlines():
        m = _LIVE.match(line)
        if m is not None:
            out[m.group(1) + m.group(2)] = (int(m.group(3)), int(m.group(4)))
    return out


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where an instruction came from: JAX's ``op_name`` and the Python source line."""

    op_name: str = ""
    source: str = ""


_FILE_NAMES = re.compile(r"^FileNames\n((?:\d+ \".*\"\n)*)", re.M)
_FUNCTION_NAMES = re.compile(r"^FunctionNames\n((?:\d+ \".*\"\n)*)", re.M)
_LOCATIONS = re.compile(r"^(\d+) \{file_name_id=(\d+) function_name_id=(\d+) line=(\d+)", re.M)
_FRAMES = re.compile(r"^(\d+) \{file_location_id=(\d+) parent_frame_id=(\d+)\}", re.M)
_META = re.compile(r'(op_name|source_file|source_line|stack_frame_id)=("(?:[^"\\]|\\.)*"|\d+)')


def _names(m: re.Match[str] | None) -> dict[str, str]:
    rows = re.findall(r"(\d+) \"(.*)\"", m.group(1)) if m else []
    return dict(rows)


def source_info(module: HloModule) -> dict[str, SourceInfo]:
    """Per instruction name, its ``op_name`` and ``file:line (function)`` (from the stack
    frame tables at the top of the module, or the older ``source_file``/``source_line``)."""
    text = module.text
    files, functions = _names(_FILE_NAMES.search(text)), _names(_FUNCTION_NAMES.search(text))
    locations = {m.group(1): (files.get(m.group(2), "?"), functions.get(m.group(3), "?"), m.group(4))
                 for m in _LOCATIONS.finditer(text)}
    frames = {m.group(1): m.group(2) for m in _FRAMES.finditer(text)}
    out = {}
    for instr in module.instructions():
        meta = dict(_META.findall(instr.raw_attributes.get("metadata", "")))
        where = ""
        if "stack_frame_id" in meta and frames.get(meta["stack_frame_id"]) in locations:
            file, function, line = locations[frames[meta["stack_frame_id"]]]
            where = f"{file.strip(chr(34))}:{line} ({function})"
        elif "source_file" in meta:
            where = f"{meta['source_file'].strip(chr(34))}:{meta.get('source_line', '?')}"
        out[instr.name] = SourceInfo(meta.get("op_name", "").strip('"'), where)
    return out


@dataclass(frozen=True, slots=True)
class MemoryReport:
    """A module's allocations with totals by kind and memory space, and each value's source.

    ``tpu_sizes`` (with ``tpu=True``) gives each value's bytes under the TPU default layout;
    ``live_peak``/``tpu_live_peak`` sum the sizes of the values live at each schedule step
    (the largest such sum; no fragmentation, buffers that share an allocation counted once
    per step).
    """

    module: str
    allocations: tuple[Allocation, ...]
    sources: dict[str, SourceInfo]
    tiled: bool
    tpu_sizes: dict[int, int] = field(default_factory=dict)
    tpu_allocations: dict[int, int] = field(default_factory=dict)
    live_peak: int | None = None
    tpu_live_peak: int | None = None

    def by_kind(self) -> dict[str, int]:
        """Allocated bytes per kind (parameter, output, temporary, …), XLA's numbers."""
        out: dict[str, int] = {}
        for a in self.allocations:
            out[a.kind] = out.get(a.kind, 0) + a.size
        return out

    def by_memory_space(self) -> dict[int, int]:
        """Allocated bytes per memory space (0 = HBM/default, 1 = VMEM on TPU, …)."""
        out: dict[int, int] = {}
        for a in self.allocations:
            out[a.memory_space] = out.get(a.memory_space, 0) + a.size
        return dict(sorted(out.items()))

    def tpu_allocation_size(self, allocation: Allocation) -> int | None:
        """The TPU estimate of one allocation (None without ``tpu``): its largest value, or
        for a block of temporaries the live peak of its values."""
        return self.tpu_allocations.get(allocation.index)

    def as_dict(self) -> dict[str, Any]:
        return {"module": self.module, "tiled": self.tiled,
                "by_kind": self.by_kind(), "by_memory_space": self.by_memory_space(),
                "total_bytes": sum(a.size for a in self.allocations),
                "live_peak_bytes": self.live_peak, "tpu_live_peak_bytes": self.tpu_live_peak,
                "allocations": [self._allocation_dict(a) for a in self.allocations]}

    def _allocation_dict(self, a: Allocation) -> dict[str, Any]:
        return {"index": a.index, "size": a.size, "kind": a.kind, "parameter": a.parameter,
                "memory_space": a.memory_space, "tpu_size": self.tpu_allocation_size(a),
                "values": [{"instruction": v.instruction, "index": v.index, "size": v.size,
                            "offset": v.offset, "tpu_size": self.tpu_sizes.get(v.id),
                            "shape": v.shape.to_string(with_layout=True) if v.shape else None,
                            "op_name": self.sources.get(v.instruction, SourceInfo()).op_name,
                            "source": self.sources.get(v.instruction, SourceInfo()).source}
                           for v in a.values]}


def _tpu_size(shape: Shape | None, generation: str | None) -> int | None:
    if shape is None or not shape.is_array:
        return None
    try:
        return array_size(tpu_shape(shape, generation=generation))
    except TensorLayoutError:
        return None  # no TPU layout is known for it (a 1-bit type, a '?' dim)


def _live_peak(values: Iterable[tuple[str, int, object]], live: dict[str, tuple[int, int]]) -> int | None:
    """The largest footprint at one schedule step: values ``(name, size, slot)`` live then,
    those sharing a slot (an allocation offset: XLA reused the buffer in place) counted once
    at their largest; None without live ranges."""
    events: dict[int, list[tuple[int, object, int]]] = {}
    for name, size, slot in values:
        span = live.get(name)
        if span is not None:
            events.setdefault(span[0], []).append((+1, slot, size))
            events.setdefault(span[1] + 1, []).append((-1, slot, size))
    if not events:
        return None
    active: dict[object, list[int]] = {}
    current: dict[object, int] = {}
    peak = total = 0
    for step in sorted(events):
        for sign, slot, size in events[step]:
            sizes = active.setdefault(slot, [])
            sizes.append(size) if sign > 0 else sizes.remove(size)
            total -= current.get(slot, 0)
            current[slot] = max(sizes, default=0)
            total += current[slot]
        peak = max(peak, total)
    return peak


def _is_tiled(allocations: Sequence[Allocation]) -> bool:
    return any(v.shape is not None and v.shape.is_array and v.shape.layout is not None
               and v.shape.layout.tiles for a in allocations for v in a.values)


def memory_report(module: HloModule, buffer_assignment: str, live_range: str | None = None, *,
                  tpu: bool = False, generation: str | None = None) -> MemoryReport:
    """The buffer assignment of ``module`` (the text of its ``…-buffer-assignment.txt``),
    with sources, live peaks (given the ``…-live-range.txt`` text) and, with ``tpu``, the
    TPU sizes of every value."""
    allocations = parse_buffer_assignment(buffer_assignment)
    values = [v for a in allocations for v in a.values]
    live = parse_live_ranges(live_range) if live_range else {}
    tpu_sizes: dict[int, int] = {}
    if tpu:
        tpu_sizes = {v.id: size for v in values
                     if (size := _tpu_size(v.shape, generation)) is not None}
    slots = [(v, (a.index, v.offset)) for a in allocations for v in a.values]
    peak = _live_peak(((v.instruction + v.index, v.size, slot) for v, slot in slots), live)
    tpu_peak = _live_peak(((v.instruction + v.index, tpu_sizes.get(v.id, v.size), slot)
                           for v, slot in slots), live) if tpu else None
    per_allocation = {a.index: _tpu_allocation(a, tpu_sizes, live) for a in allocations} if tpu else {}
    return MemoryReport(module.name, allocations, source_info(module), _is_tiled(allocations),
                        tpu_sizes, per_allocation, peak, tpu_peak)


def _tpu_allocation(a: Allocation, tpu_sizes: dict[int, int], live: dict[str, tuple[int, int]]) -> int:
    sizes = [(v.instruction + v.index, tpu_sizes.get(v.id, v.size), v.offset) for v in a.values]
    if a.kind == "temporary" and len(sizes) > 1:
        peak = _live_peak(sizes, live)
        if peak is not None:
            return peak
    return max((size for _, size, _ in sizes), default=a.size)


#: The fields of JAX's ``CompiledMemoryStats`` (``compiled.memory_analysis()``) that count bytes.
_STATS = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
          "temp_size_in_bytes", "generated_code_size_in_bytes", "host_argument_size_in_bytes",
          "host_output_size_in_bytes", "host_alias_size_in_bytes", "host_temp_size_in_bytes")


def compiler_memory(compiled: Any) -> dict[str, int]:
    """``compiled.memory_analysis()`` of a compiled JAX function as a dict (the fields present).

    >>> from types import SimpleNamespace
    >>> stats = SimpleNamespace(argument_size_in_bytes=64, output_size_in_bytes=8, temp_size_in_bytes=0)
    >>> compiler_memory(SimpleNamespace(memory_analysis=lambda: stats))
    {'argument_size_in_bytes': 64, 'output_size_in_bytes': 8, 'temp_size_in_bytes': 0}
    """
    stats = compiled.memory_analysis()
    if stats is None:
        raise TensorLayoutError("this backend gives no memory analysis for the compiled function")
    return {name: int(getattr(stats, name)) for name in _STATS if hasattr(stats, name)}
