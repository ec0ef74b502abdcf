"""The subcommands, in the order `--help` lists them: command name -> (its module, its one-line help).

The top-level help and usage errors read this table, so `tensorlayout --help` loads no subcommand
module; each module's ``register`` takes its one-line help from :data:`HELP`.

>>> MODULES["convert-layout"], HELP["show"]
('convert_layout', 'show where each element of a layout lives')
"""

from __future__ import annotations

__all__ = ["HELP", "MODULES"]

_TABLE = (
    ("show", "show", "show where each element of a layout lives"),
    ("simplify", "simplify", "simplify an XLA indexing map"),
    ("maps", "maps", "print the HLO indexing maps of a module's instructions"),
    ("render", "render", "draw a layout as SVG, HTML, TikZ, PNG or PDF"),
    ("padding", "padding", "explain the padding of a shape or of a module's buffers"),
    ("tiles", "tiles", "XLA's symbolic tiles of each fusion (or why it cannot be tiled)"),
    ("design", "design", "choose a shared-memory layout for given accesses, with a proof"),
    ("convert-layout", "convert_layout", "Triton's lowering of a convert_layout, before compiling"),
    ("explore", "explore", "the explorer page: type a layout, see its views (served or saved)"),
    ("explain", "explain", "derive a CuTe algebra result step by step"),
    # JAX/TPU tools: memory as the compiler sees it
    ("memory", "memory", "a dumped module's buffer assignment: parameters, outputs, temporaries, peak, "
                         "per buffer with its source line"),
    ("blocks", "blocks", "check a Pallas TPU block shape against the lowering's rules"),
    ("doctor", "doctor", "each buffer that pads on TPU, why, and the fix as JAX code"),
    ("layouts", "layouts", "the copies and transposes layout assignment inserted, what forced each, "
                           "the bytes moved"),
)

#: command name -> the module under ``tensorlayout.cli`` that registers it
MODULES = {name: module for name, module, _ in _TABLE}
#: command name -> its line in `tensorlayout --help`
HELP = {name: text for name, _, text in _TABLE}
