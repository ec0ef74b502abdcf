"""HLO instructions printed as XLA's ``HloInstruction::ToString`` prints them.

XLA's parser makes instruction names unique across the module (the first ``p0`` stays
``p0``, a later one in another computation becomes ``p0.1``); shapes print with their layout,
operands and called computations with a ``%`` prefix. Attributes print in the module text's
order and spelling (compare whitespace-insensitively, as XLA's test matchers do).

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nadd {\\n p0 = f32[] parameter(0)\\n p1 = f32[] parameter(1)\\n"
...   " ROOT a = f32[] add(p0, p1)\\n}\\nENTRY e {\\n p0 = f32[8,4] parameter(0)\\n c = f32[] constant(0)\\n"
...   " ROOT r = f32[8] reduce(p0, c), dimensions={1}, to_apply=add\\n}")
>>> instruction_to_string(m.entry.root)
'%r = f32[8]{0} reduce(%p0.1, %c), dimensions={1}, to_apply=%add'
"""

from __future__ import annotations

import re
from functools import lru_cache

from tensorlayout.hlo.model import HloInstruction, HloModule

__all__ = ["instruction_to_string", "unique_names"]

_COMPUTATION_ATTRIBUTES = frozenset({"to_apply", "calls", "body", "condition", "select", "scatter"})


@lru_cache(maxsize=64)
def unique_names(module: HloModule) -> dict[HloInstruction, str]:
    """Instruction -> the name XLA's module-wide name uniquer gives it (text order)."""
    taken: set[str] = set()
    next_suffix: dict[str, int] = {}
    names: dict[HloInstruction, str] = {}
    for computation in module.computations:
        for instr in computation.instructions:
            name = instr.name
            if name in taken:
                k = next_suffix.get(name, 1)
                while f"{name}.{k}" in taken:
                    k += 1
                next_suffix[name] = k + 1
                name = f"{name}.{k}"
            taken.add(name)
            names[instr] = name
    return names


def _name(instr: HloInstruction) -> str:
    parent = instr.parent
    module = parent.module if parent is not None else None
    return unique_names(module).get(instr, instr.name) if module is not None else instr.name


def _attribute(key: str, raw: str) -> str:
    if key in _COMPUTATION_ATTRIBUTES:
        raw = re.sub(r"(?<![%\w.])([A-Za-z_][\w.\-]*)", r"%\1", raw)
    return f"{key}={raw}"


def instruction_to_string(instr: HloInstruction) -> str:
    """``HloInstruction::ToString()``: ``%name = shape opcode(%operands), attributes``."""
    if instr.opcode == "parameter":
        inner = str(instr.parameter_number)
    elif instr.opcode == "constant":
        inner = instr.literal or ""
    else:
        inner = ", ".join(f"%{_name(op)}" for op in instr.operands)
    text = f"%{_name(instr)} = {instr.shape.to_string(with_layout=True)} {instr.opcode}({inner})"
    attributes = [_attribute(k, v) for k, v in instr.raw_attributes.items() if k != "metadata"]
    return ", ".join([text, *attributes])
