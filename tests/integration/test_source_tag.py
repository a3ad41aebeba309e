"""The cache tag of a model's source: its files' contents, not where they are."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

from fusionviz.measure import zoo
from fusionviz.measure.provenance import content_tag, source_tag


def test_a_copy_of_the_same_files_elsewhere_has_the_same_tag_and_an_edit_another(tmp_path: Path) -> None:
    """A copy at a path that sorts before torch's files and one that sorts after them: one tag (by path order,
    the first checkout's zoo.py came after torch's files and a copy's before them, and the copy missed its
    cache); an edit of one byte gives another."""
    files = [zoo.__file__, torch.nn.modules.linear.__file__]
    copies = []
    for name in ("0", "~"):
        folder = tmp_path / name
        folder.mkdir()
        copies.append([shutil.copy(file, folder / f"{i}.py") for i, file in enumerate(files)])
    tag = content_tag(files)
    assert tag == content_tag(reversed(files)) == content_tag(copies[0]) == content_tag(copies[1])
    edited = Path(copies[1][0])
    edited.write_text(edited.read_text() + "\n")
    assert content_tag(copies[1]) != tag
    model = zoo.MODELS["linear_ln_gelu"].build(32, None)
    assert source_tag(model) == content_tag({zoo.__file__, torch.nn.modules.linear.__file__,
                                             torch.nn.modules.normalization.__file__})
