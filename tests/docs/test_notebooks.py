"""The notebooks in notebooks/ run top to bottom (nbclient, the `notebooks` extra) and show
their pictures inline; without the extra installed they skip."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent.parent / "notebooks").glob("*.ipynb"))


def test_the_three_notebooks_exist() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {"tpu_padding", "ascend_zn", "fusion_indexing"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_and_draws(path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any({"image/png", "image/svg+xml"} & set(o.get("data", {})) for o in outputs), "no picture"
