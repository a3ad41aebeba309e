"""What the fuzz suite shares: hostile JSON values, the opening of a file end to end as the app and `inspect`
use it, and a tally of inputs tried (printed at the end of the test run, see conftest)."""

from __future__ import annotations

import copy
import os
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from fusionviz.analysis.report import analyse
from fusionviz.analysis.verdict import verdict
from fusionviz.charts.views import view_caption
from fusionviz.cli.inspection import inspect_report
from fusionviz.cli.reporter import json_text
from fusionviz.errors import FusionvizError
from fusionviz.records.files import open_file
from fusionviz.records.session import Session

TALLY: Counter[str] = Counter()  # "opened" / "refused" per input; anything else escaping fails its test

# Examples per fuzz test: a few hundred in the fast tier; FUSIONVIZ_FUZZ_EXAMPLES=N for a long run.
EXAMPLES = int(os.environ.get("FUSIONVIZ_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example])

# Values a hostile or broken writer puts where a number, a string, an id, an object or a list belongs.
HOSTILE: st.SearchStrategy[Any] = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**6), max_value=10**6),
    st.integers(min_value=10**18, max_value=10**400), st.integers(max_value=-(10**18), min_value=-(10**400)),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["", "NaN", "1e400", "-1", "![x](http://example.invalid/x.png)", "<script>x</script>",
                     "=cmd|' /C calc'!A0", "ProfilerStep#1", "cudaLaunchKernel", "kernel", "cpu_op"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.just([[[[]]]]),
)


def exercise(raw: bytes, name: str = "fuzzed.json") -> Session | None:
    """Open `raw` and use the result as the app and `inspect` do; returns the session, or None when it was
    refused with the project's own error. Any other exception escapes (a failure)."""
    try:
        session = open_file(raw, name)
        report = analyse(session)
        json_text(inspect_report(report, name, top=5))
        verdict_of_timing = verdict(session, report.latencies, report.speedups, report.comparisons, report.busy)
        parts = (report.summary, verdict_of_timing, report.verdict, report.warnings)  # none may raise
        assert all(part is not None for part in parts)
        for view in ("verdict", "timeline", "collapse", "latency"):
            view_caption(report, view)
    except FusionvizError:
        TALLY["refused"] += 1
        return None
    TALLY["opened"] += 1
    return session


def mutate(tree: Any, data: st.DataObject, changes: int) -> Any:
    """`tree` (JSON values, changed in place) with `changes` values replaced by hostile ones or deleted,
    at paths drawn from every path in it."""
    for _ in range(changes):
        paths = list(_paths(tree, ()))
        if not paths:
            return tree
        path = data.draw(st.sampled_from(paths))
        parent = tree
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and data.draw(st.booleans()) and data.draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(data.draw(HOSTILE))  # `st.just` hands out one shared object
    return tree


def _paths(value: Any, prefix: tuple[Any, ...]) -> Any:
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        if isinstance(child, dict | list) and len(prefix) < 12:
            yield from _paths(child, (*prefix, key))
