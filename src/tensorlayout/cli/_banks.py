"""`--access`: the warp access whose shared-memory bank conflicts `show --banks` reports and
`render --banks` draws.

`row` / `column`: the warp's 32 lanes each move one 128-bit vector along the tile's rows (then
the next rows) or down its columns; `ldmatrix-x4`: `SM75_U32x4_LDSM_N` (each lane gives one
16-byte row of four 8x8 matrices), laid out as the A operand of the SM80 m16n8k16 f16 MMA as
CuTe's examples do; any other name is a copy atom by CuTe's name laid out the same way, one
instruction per lane (the first of the tiled copy's values).

>>> tv, name = access_of((16, 64), 16, "ldmatrix-x4")
>>> print(name)
SM75_U32x4_LDSM_N (ldmatrix .x4) as the A operand of SM80_16x8x16_F16F16F16F16_TN
>>> [tv.coord(t, 0) for t in (0, 1, 16)], tv.num_values
([(0, 0), (1, 0), (0, 8)], 8)
"""

from __future__ import annotations

from tensorlayout.cli._gpu_names import ACCESS_HELP, COPY_MMA
from tensorlayout.cli._io import UsageError
from tensorlayout.cute import Layout, composition, size
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.gpu.atoms import copy_atom, mma_atom
from tensorlayout.gpu.banks import BankReport, bank_conflicts, shared_core, vector_access
from tensorlayout.gpu.tiled import make_tiled_copy_a, make_tiled_mma
from tensorlayout.gpu.tv import TVLayout

__all__ = ["ACCESS_HELP", "COPY_MMA", "access_of", "bank_facts", "bank_text"]

#: access names that are not copy atoms: what each is
_NAMED = {"row": "128-bit vectors along rows", "column": "128-bit vectors down columns",
          "ldmatrix-x4": "SM75_U32x4_LDSM_N"}


def _atom_access(name: str, bits: int) -> TVLayout:
    """One instruction of copy atom ``name`` per lane, tiled as the A operand of :data:`COPY_MMA`."""
    try:
        atom = copy_atom(name)
    except LayoutError as err:
        raise UsageError(f"--access {name!r} is not row, column, ldmatrix-x4 or a copy atom "
                         f"({err})") from None
    if atom.val_id is not None:
        raise UnsupportedError(f"{name} copies tensor memory, not shared memory: it has no bank report")
    source = make_tiled_copy_a(atom, bits, make_tiled_mma(mma_atom(COPY_MMA))).tv_s()
    threads, values = source.num_threads, int(size(atom.val_layout_src(bits)[1]))
    first = composition(source.layout, Layout((threads, values), (1, threads)))
    return TVLayout(first, source.tile, name)


def access_of(tile: tuple[int, int], bits: int, name: str) -> tuple[TVLayout, str]:
    """The access ``name`` over a shared ``tile`` of ``bits``-bit elements, and its description."""
    if name in ("row", "column"):
        return vector_access(tile, bits, 128, name), _NAMED[name]
    atom = _NAMED.get(name, name)
    extra = " (ldmatrix .x4)" if name == "ldmatrix-x4" else ""
    return _atom_access(atom, bits), f"{atom}{extra} as the A operand of {COPY_MMA}"


def _report(smem: str, bits: int, name: str) -> tuple[tuple[int, ...], str, int, BankReport]:
    core = shared_core(smem)
    if len(core.shape) != 2:
        raise UnsupportedError(f"--banks reads a 2-D shared tile, but {smem} has rank {len(core.shape)}")
    access, what = access_of((core.shape[0], core.shape[1]), bits, name)
    return core.shape, what, min(access.num_threads, 32), bank_conflicts(core, bits, access)


def bank_text(smem: str, bits: int, name: str) -> str:
    """The text bank report: the layout, the access and each phase's wavefronts.

    >>> print(bank_text("(8,64):(64,1)", 16, "column").splitlines()[1])
    access: 128-bit vectors down columns (warp 0, 32 lanes)
    """
    shape, what, lanes, report = _report(smem, bits, name)
    return (f"{smem.strip()} ({bits}-bit elements, {shape[0]}x{shape[1]})\n"
            f"access: {what} (warp 0, {lanes} lanes)\n{report}")


def bank_facts(smem: str, bits: int, name: str) -> dict[str, object]:
    """The bank report as JSON-ready facts (``show --banks --json``).

    >>> bank_facts("(8,64):(64,1)", 16, "row")["conflicts"]
    0
    """
    shape, what, _lanes, report = _report(smem, bits, name)
    return {"layout": smem.strip(), "element_bits": bits, "shape": list(shape), "access": what,
            "vector_bytes": report.vector_bytes, "lanes_per_phase": report.lanes_per_phase,
            "wavefronts": report.wavefronts, "ideal": report.ideal, "conflicts": report.conflicts,
            "max_way": report.max_way,
            "phases": [{"lanes": list(p.lanes), "wavefronts": p.wavefronts,
                        "conflict_banks": [b for b, _w, _l in p.collisions]} for p in report.phases]}
