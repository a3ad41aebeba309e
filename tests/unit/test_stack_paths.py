"""A cache hit's stack traces named in this process's files: Inductor replays the traces of the process that
compiled first, which may have run another checkout or another environment's copy of a library."""

from __future__ import annotations

import sys

from fusionviz.records import stacks
from fusionviz.records.stacks import module_files, rebased, stack_lines

HERE = {"fusionviz/measure/zoo.py": "/work/main/fusionviz/measure/zoo.py",
        "transformers/models/gpt2/modeling_gpt2.py": "/venv/site-packages/transformers/models/gpt2/modeling_gpt2.py",
        "model.py": "/work/main/model.py", "utils.py": "/work/main/utils.py"}


def frame(path: str, line: int) -> str:
    return f'  File "{path}", line {line}, in forward\n    return x\n'


def test_another_checkout_s_and_environment_s_files_become_this_process_s() -> None:
    trace = frame("/work/wt-b/fusionviz/measure/zoo.py", 61) + frame(
        "/other/venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py", 304)
    assert stack_lines(rebased(trace, HERE, exists=lambda p: True)) == [
        "/venv/site-packages/transformers/models/gpt2/modeling_gpt2.py:304"]  # innermost frame
    assert rebased(trace, HERE, exists=lambda p: True).count('File "/work/main/fusionviz/measure/zoo.py", line 61') == 1


def test_a_file_of_this_process_and_an_unknown_one_stay_as_they_are() -> None:
    ours = frame("/work/main/fusionviz/measure/zoo.py", 44) + frame("/elsewhere/pkg/other.py", 3)
    assert rebased(ours, HERE) == ours


def test_a_bare_file_name_is_taken_only_for_a_path_that_is_no_file_here() -> None:
    """Two checkouts on one machine both exist: their top-level `model.py` may be different files."""
    elsewhere = frame("/gone/checkout/model.py", 5)
    assert rebased(elsewhere, HERE, exists=lambda p: False) == frame("/work/main/model.py", 5)
    assert rebased(elsewhere, HERE, exists=lambda p: True) == elsewhere


def test_loaded_modules_are_found_by_their_import_path() -> None:
    files = module_files(dict(sys.modules))
    assert files["fusionviz/records/stacks.py"] == stacks.__file__
    assert files["fusionviz/records/__init__.py"].endswith("fusionviz/records/__init__.py")
