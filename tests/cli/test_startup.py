"""Start-up imports what the subcommand needs: `show` of a shape loads no GPU, HLO or JAX
code, and the package's subpackages load on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tensorlayout

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
