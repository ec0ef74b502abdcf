"""Start-up imports what the subcommand needs: `show` of a shape loads no GPU, HLO or JAX
code, and the package's subpackages load on first use."""

from __future__ import annotations

import importlib
import random
import subprocess
import sys

import numpy as np
import pytest

import tensorlayout
from tensorlayout import cute, triton
from tensorlayout.cli import _target, build_parser
from tensorlayout.cli._commands import HELP, MODULES
from tensorlayout.cli._target import target_from
from tensorlayout.cute.layout import Layout
from tensorlayout.errors import LayoutError
from tensorlayout.triton.linear_layout import LinearLayout

PROBE = """
import sys
from tensorlayout.cli import main
main(["show", "f32[3,5]{1,0:T(2,2)}"])
print(sorted({k.split(".")[1] for k in sys.modules if k.startswith("tensorlayout.")}))
"""


def test_show_of_a_shape_imports_no_gpu_hlo_or_jax_code() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    loaded = out.strip().splitlines()[-1]
    for heavy in ("gpu", "hlo", "jax", "tiling", "design", "explore"):
        assert f"'{heavy}'" not in loaded, loaded


def test_subpackages_load_on_first_use() -> None:
    assert "cute" in dir(tensorlayout) and "ParseError" in dir(tensorlayout)
    assert str(tensorlayout.cute.Layout((2, 2), (1, 2))) == "(2,2):(1,2)"
    out = subprocess.run([sys.executable, "-c", "import sys, tensorlayout; "
                          "print(any(k.startswith('tensorlayout.cute') for k in sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        tensorlayout.nonexistent  # noqa: B018


LOADED = """
import sys
from tensorlayout.cli import main
main(["show", "f32[3,5]{1,0:T(2,2)}"])
print(" ".join(sorted(k for k in sys.modules if k.startswith("tensorlayout.") or k == "json")))
"""

#: What `show` of an XLA shape used to import and needs none of: Triton's parser, bridge and linear
#: layouts, the conversions' CuTe search, the indexing maps, any CuTe code (the `tensorlayout.cute`
#: package too), the pictures (their package too) and the TPU padding of `--tpu`; and of the
#: command's own modules, those of `--as`, `--json`, `--index`/`--offset`, Triton text, coordinate
#: layouts, `--coalescing` and `--banks`.
NOT_FOR_A_SHAPE = {f"tensorlayout.{name}" for name in (
    "triton._mlir", "triton.bridge", "triton.linear_layout", "triton.encodings", "convert._search",
    "convert._xla_cute", "indexing", "cute", "cute.algebra", "cute.swizzle", "cute.layout_ops", "cute.layout",
    "cute.int_tuple", "cute.int_tuple_ops", "cute.tla", "cute.basis", "cute._dot", "render", "render._triton",
    "render._draw", "render._pictures", "render._source", "render._coords", "xla.padding", "cli._show_as",
    "cli._show_extra", "cli._triton", "cli._facts", "cli._locate", "cli._banks",
    # the rarely used parts of the modules it reads: XLA's tiling recipe, per-call index math and byte
    # strides, a shape's and a layout's constructor, equality and rare annotations, a core layout's lookups
    "xla.tiling_recipe", "xla.index_math", "xla.shape_ops", "xla.layout_ops", "xla.strides", "core._queries")}


def test_show_of_a_shape_imports_only_what_it_needs() -> None:
    out = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    loaded = set(lines[-1].split())
    assert "tensorlayout.xla.lowering" in loaded and "offset of each element" in out  # it did show the shape
    assert not loaded & NOT_FOR_A_SHAPE, sorted(loaded & NOT_FOR_A_SHAPE)
    assert "json" not in loaded  # only --json prints JSON


@pytest.mark.parametrize("package", ["cute", "xla", "triton", "convert"])
def test_lazy_packages_give_every_public_name(package: str) -> None:
    probe = (f"import tensorlayout.{package} as p; missing = [n for n in p.__all__ if n not in dir(p)]; "
             "values = [getattr(p, n) for n in p.__all__]; "
             "print(missing, all(v is not None for v in values))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True"
    module = importlib.import_module(f"tensorlayout.{package}")
    with pytest.raises(AttributeError, match=f"'tensorlayout.{package}' has no attribute 'nonexistent'"):
        module.nonexistent  # noqa: B018


def test_lazy_names_are_the_modules_own() -> None:
    assert cute.Layout is Layout and triton.LinearLayout is LinearLayout
    assert cute.ceil_div((7, 9), 2) == (4, 9)
    with pytest.raises(LayoutError, match="expected an int or a tuple of ints"):
        cute.product("x")


def _random_shape(rng: random.Random) -> str:
    """XLA shape text: rank 0-3, any dim order, maybe tiled (a second tile for narrow types)."""
    rank = rng.randint(0, 3)
    dims = [rng.randint(1, 9) for _ in range(rank)]
    order = rng.sample(range(rank), rank)
    dtype = rng.choice(["f32", "bf16", "s8", "pred", "s4"])
    if not rank:
        return f"{dtype}[]"
    tiles = ""
    if rng.random() < 0.7:
        tile = [rng.choice([1, 2, 4, 8]) for _ in range(rng.randint(1, rank))]
        second = rng.choice(["", "(2,1)", "(4,1)"]) if dtype != "f32" else ""
        tiles = f":T({','.join(map(str, tile))}){second}"
    return f"{dtype}[{','.join(map(str, dims))}]{{{','.join(map(str, order))}{tiles}}}"


def test_owners_of_a_shape_from_its_core_are_the_pictures_owners() -> None:
    """`Target.owners` of an XLA shape skips the picture source; it answers as the source does."""
    rng = random.Random(30)
    for _ in range(200):
        target = target_from(_random_shape(rng))
        n = target.slots + 3  # past the end too
        assert np.array_equal(target.owners(n), target.source.owners(n)), target.text


def test_owners_of_a_coordinate_layout_come_from_its_source() -> None:
    target = target_from("ArithTuple(0,6) o ((_2,_2),_1,_1):((_1@1,_8@0),_0,_0)")
    assert target.owners(72).tolist() == target.source.owners(72).tolist()
    assert sorted(k for k in target.owners(72).tolist() if k >= 0) == [0, 1, 2, 3]


def test_tla_formats_load_only_when_named() -> None:
    """Registering `--tla` loads no TLA code; its help still lists every format, and the lazy
    `TLA_FORMATS` is `cute.tla`'s own."""
    probe = ("import sys; from tensorlayout.cli import build_parser; p = build_parser(['show']); "
             "print('tensorlayout.cute.tla' in sys.modules); "
             "sub = next(a for a in p._actions if a.dest == 'command'); "
             "print(' '.join(sub.choices['show'].format_help().split()))")
    loaded, text = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                  check=True).stdout.splitlines()
    assert loaded == "False" and "instead of TARGET: RowMajor, ColumnMajor, VectorLayout, zN," in text
    from_target = _target.TLA_FORMATS
    assert from_target is cute.tla.FORMATS and "Weight4BitnZ" in from_target


def test_top_level_help_loads_no_subcommand_module() -> None:
    """`--help`, a bad command and no command answer from the table of one-line helps: no
    subcommand module loads, and the text is the whole parser's, byte for byte."""
    probe = ("import sys, io; from contextlib import redirect_stderr, redirect_stdout\n"
             "from tensorlayout.cli import main\n"
             "for argv in (['--help'], ['bogus'], []):\n"
             "    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):\n"
             "        try:\n"
             "            main(argv)\n"
             "        except SystemExit:\n"
             "            pass\n"
             "print(sorted(k for k in sys.modules if k.startswith('tensorlayout.cli.')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tensorlayout.cli._commands', 'tensorlayout.cli._io']"
    assert build_parser(["--help"]).format_help() == build_parser().format_help()
    assert build_parser(["bogus"]).format_usage() == build_parser().format_usage()


def test_each_command_loads_its_own_module_only() -> None:
    """A command line naming a command (`convert-layout` too, whose module is `convert_layout`)
    registers that command alone, with the help line the table gives it."""
    for name, module in MODULES.items():
        sub = next(a for a in build_parser([name, "x"])._actions if a.dest == "command")
        assert list(sub.choices) == [name], name
        assert [a.help for a in sub._choices_actions] == [HELP[name]], name
        assert importlib.import_module(f"tensorlayout.cli.{module}").register


#: Per other notation `show` reads, a command line of it: none loads any XLA module.
OTHER_NOTATIONS = {
    "CuTe layout": ["show", "((4,2),(4,3)):((4,16),(1,32))"],
    "Triton text": ["show", "tensor<4x16xf16, #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], "
                    "warpsPerCTA = [1, 1], order = [1, 0]}>>"],
    "CuTe lookup": ["show", "((4,2),(4,3)):((4,16),(1,32))", "--index", "3,5"],
}


@pytest.mark.parametrize("argv", OTHER_NOTATIONS.values(), ids=list(OTHER_NOTATIONS))
def test_show_of_another_notation_loads_no_xla_code(argv: list[str]) -> None:
    probe = ("import sys, io, contextlib\nfrom tensorlayout.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
             f"    code = main({argv!r})\n"
             "print(code, bool(out.getvalue()),\n"
             "      sorted(k for k in sys.modules if k.startswith('tensorlayout.xla')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "True", "[]"], out


#: Records every dataclass a command's start-up creates and whether it had methods generated.
DATACLASSES = """
import dataclasses, io, contextlib, sys
made = []
process = dataclasses._process_class
def record(cls, init, repr, eq, *rest):
    made.append((cls.__qualname__, init or repr or eq))
    return process(cls, init, repr, eq, *rest)
dataclasses._process_class = record
from tensorlayout.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
print(sorted(name for name, generated in made if generated))
"""


def test_show_of_a_shape_compiles_no_dataclass_methods() -> None:
    """A frozen dataclass compiles its __init__, __repr__, __eq__ and __hash__ with exec when its
    module loads (about half a millisecond each class); the values `show` of a shape loads write
    theirs out (:class:`tensorlayout.core._frozen.Frozen`, or a dataclass with them written)."""
    out = subprocess.run([sys.executable, "-c", DATACLASSES, "show", "f32[3,5]{1,0:T(2,2)}"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
