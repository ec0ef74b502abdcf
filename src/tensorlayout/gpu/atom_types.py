"""The two atom values, :class:`MMAAtom` and :class:`CopyAtom`, printed as CuTe's ``print`` does.

Their layouts are static in C++ (``Layout<Shape<_4,_8>,...>``), so they print ``_N``.

>>> from tensorlayout.gpu.atoms import copy_atom
>>> print(copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>").describe(16))
Copy_Atom
  ThrID:        _1:_0
  ValLayoutSrc: (_1,_8):(_0,_1)
  ValLayoutDst: (_1,_8):(_0,_1)
  ValLayoutRef: (_1,_8):(_0,_1)
  ValueType:    16b
"""

from __future__ import annotations

from dataclasses import dataclass

from tensorlayout.cute import Layout, recast_layout
from tensorlayout.cute.int_tuple import Int, format_int_tuple
from tensorlayout.errors import LayoutError
from tensorlayout.gpu.cxx_names import static_layout
from tensorlayout.gpu.tv import TVLayout

__all__ = ["CopyAtom", "MMAAtom", "op_name"]


def op_name(name: str) -> str:
    """The instruction of an atom's C++ name: ``X<...>`` gives ``X``, ``MMA_Traits<X, ...>`` gives ``X``.

    >>> op_name("MMA_Traits<SM100_MMA_F8F6F4_SS, float_e4m3_t>"), op_name("SM90_U32x4_STSM_N")
    ('SM100_MMA_F8F6F4_SS', 'SM90_U32x4_STSM_N')
    """
    if name.startswith("MMA_Traits<"):
        name = name[len("MMA_Traits<"):]
        return name.split(",", 1)[0].split("<", 1)[0].strip()
    return name.split("<", 1)[0].strip()


@dataclass(frozen=True)
class MMAAtom:
    """One MMA instruction: its ``Shape_MNK``, ``ThrID`` and A/B/C TV layouts (CuTe's traits),
    the value types' ``sizeof_bits`` (``val_bits``, A/B/C; a static ``Int`` where C++'s is) and,
    for shared-memory operands, the A/B majors (``"K"`` or ``"MN"``).

    >>> print(mma_atom_example())
    MMA_Atom
      ThrID:      _32:_1
      Shape_MNK:  (_16,_8,_8)
      LayoutA_TV: ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))
      LayoutB_TV: ((_4,_8),_2):((_16,_1),_8)
      LayoutC_TV: ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))
    """

    name: str
    shape_mnk: tuple[int, int, int]
    thr_id: Layout
    layout_a: Layout
    layout_b: Layout
    layout_c: Layout
    val_bits: tuple[int, int, int] | None = None
    majors: tuple[str, str] | None = None

    @property
    def op(self) -> str:
        """The instruction's name without template arguments (CuTe's op struct)."""
        return op_name(self.name)

    def tv_a(self) -> TVLayout:
        """A's TV layout over the ``M x K`` tile."""
        return TVLayout(self.layout_a, (self.shape_mnk[0], self.shape_mnk[2]), f"{self.name} A")

    def tv_b(self) -> TVLayout:
        """B's TV layout over the ``N x K`` tile."""
        return TVLayout(self.layout_b, (self.shape_mnk[1], self.shape_mnk[2]), f"{self.name} B")

    def tv_c(self) -> TVLayout:
        """C's TV layout over the ``M x N`` tile."""
        return TVLayout(self.layout_c, (self.shape_mnk[0], self.shape_mnk[1]), f"{self.name} C")

    def __str__(self) -> str:
        shape = format_int_tuple(tuple(Int(x) for x in self.shape_mnk))
        return (f"MMA_Atom\n  ThrID:      {self.thr_id}\n  Shape_MNK:  {shape}\n"
                f"  LayoutA_TV: {self.layout_a}\n  LayoutB_TV: {self.layout_b}\n"
                f"  LayoutC_TV: {self.layout_c}")


def mma_atom_example() -> MMAAtom:
    """SM80's m16n8k8 f16 atom, built here for the docstring above."""
    rows = static_layout(Layout(((4, 8), (2, 2)), ((32, 1), (16, 8))))
    return MMAAtom("SM80_16x8x8_F16F16F16F16_TN", (16, 8, 8), static_layout(Layout(32, 1)), rows,
                   static_layout(Layout(((4, 8), 2), ((16, 1), 8))), rows)


def _check_bits(bits: int) -> int:
    if not isinstance(bits, int) or isinstance(bits, bool) or bits < 1:
        raise LayoutError(f"a value type has a positive number of bits, got {bits!r}")
    return bits


@dataclass(frozen=True)
class CopyAtom:
    """One copy instruction: ``ThrID`` and (thread, bit) layouts of source, destination, reference
    (``Copy_Traits``), and for tensor memory the ``ValID`` bit addresses.

    >>> from tensorlayout.gpu.atoms import copy_atom
    >>> str(copy_atom("SM75_U32x4_LDSM_N").val_layout_src(16))
    '(_32,_8):(_8,_1)'
    """

    name: str
    thr_id: Layout
    src: Layout
    dst: Layout
    ref: Layout
    val_id: Layout | None = None

    @property
    def op(self) -> str:
        """The instruction's name without template arguments."""
        return op_name(self.name)

    def val_layout_src(self, bits: int) -> Layout:
        """The source layout in elements of ``bits`` bits (``Copy_Atom<Op, T>::ValLayoutSrc``)."""
        return static_layout(recast_layout(self.src, 1, _check_bits(bits)))

    def val_layout_dst(self, bits: int) -> Layout:
        """The destination layout in elements of ``bits`` bits."""
        return static_layout(recast_layout(self.dst, 1, _check_bits(bits)))

    def val_layout_ref(self, bits: int) -> Layout:
        """The reference layout in elements of ``bits`` bits."""
        return static_layout(recast_layout(self.ref, 1, _check_bits(bits)))

    def describe(self, bits: int) -> str:
        """CuTe's print of ``Copy_Atom<Op, T>`` for a value type ``T`` of ``bits`` bits."""
        return (f"Copy_Atom\n  ThrID:        {self.thr_id}\n"
                f"  ValLayoutSrc: {self.val_layout_src(bits)}\n"
                f"  ValLayoutDst: {self.val_layout_dst(bits)}\n"
                f"  ValLayoutRef: {self.val_layout_ref(bits)}\n  ValueType:    {bits}b")
