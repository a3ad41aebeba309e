"""records.derived: a value derived from a record is made once per record object, and goes when the record does."""

from __future__ import annotations

import gc

from fusionviz.analysis.kernel_tables import iteration_kernels, iteration_rows
from fusionviz.analysis.provenance import kernel_provenance
from fusionviz.records import derived as derived_module
from fusionviz.records.derived import derived
from fusionviz.records.files import open_path
from fusionviz.records.session import ModeRun
from tests.conftest import DATA


def test_a_value_is_made_once_per_record_and_freed_with_it() -> None:
    made: list[str] = []

    @derived
    def label(run: ModeRun) -> str:
        made.append(run.mode)
        return run.mode.upper()

    a, b = ModeRun(mode="eager"), ModeRun(mode="default")
    assert [label(a), label(a), label(b), label(a)] == ["EAGER", "EAGER", "DEFAULT", "EAGER"]
    assert made == ["eager", "default"]
    kept = id(a)
    assert kept in derived_module._VALUES
    del a
    gc.collect()
    assert kept not in derived_module._VALUES
    again = ModeRun(mode="eager")  # a new record, whatever id it gets, is derived anew
    assert label(again) == "EAGER" and made == ["eager", "default", "eager"]


def test_the_analyses_share_one_list_per_run() -> None:
    run = ModeRun(mode="eager")
    assert kernel_provenance(run) is kernel_provenance(run)
    assert kernel_provenance(ModeRun(mode="eager")) == kernel_provenance(run)


def test_a_caller_s_change_to_a_shared_kernel_table_stays_its_own() -> None:
    """The representative iteration's table is made once per run and handed out as a copy-on-write view."""
    run = open_path(DATA / "h200_prov_mlp_512x256_float32.json.gz").run("default")
    assert run is not None
    first = iteration_kernels(run)
    name = first.name[0]
    first["dur_us"] = 0.0
    first.loc[0, "name"] = "changed"
    again = iteration_kernels(run)
    assert (again.dur_us > 0).all() and again.name[0] == name
    assert iteration_rows(run).name[0] == name
