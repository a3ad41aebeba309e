"""records.derived: a value derived from a record is made once per record object, and goes when the record does."""

from __future__ import annotations

import gc

from fusionviz.analysis.provenance import kernel_provenance
from fusionviz.records import derived as derived_module
from fusionviz.records.derived import derived
from fusionviz.records.session import ModeRun


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
