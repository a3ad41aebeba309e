"""A trace's bytes (typed decoding, only the fields read) and its JSON values already loaded read the recorded
H200 traces into the same tables; an odd value falls back to reading one event at a time."""

import gzip
import json
from pathlib import Path

import pytest

from fusionviz.records import trace
from fusionviz.records.files import open_file

DATA = Path(__file__).resolve().parents[1] / "data"
TRACES = sorted(DATA.glob("*.trace.json.gz"))


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_bytes_and_loaded_json_read_alike(path: Path) -> None:
    raw = path.read_bytes()
    fast = trace.parse_trace(raw)
    loaded = trace.parse_trace(json.loads(gzip.decompress(raw)))
    assert loaded.kernel_rows == fast.kernel_rows
    assert loaded.cpu_op_rows == fast.cpu_op_rows
    assert (loaded.summary, loaded.kernel_files) == (fast.summary, fast.kernel_files)
    assert fast.kernels.shape[0] == len(fast.kernel_rows) > 0


def test_odd_values_fall_back_to_the_checked_path() -> None:
    # a value the fast path's types refuse: the checked path reads the event and names what is wrong, unless
    # the event is one the reader does not use
    odd = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": [1]},
                           {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 10}]}
    with pytest.raises(trace.TraceError, match=r"event 0 \(aten::mm\) has args of type list, not an object"):
        trace.parse_trace(json.dumps(odd).encode())
    odd["traceEvents"][0]["cat"] = "gpu_user_annotation"  # not read: its args are not looked at
    odd["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2,
                               "args": {"External id": 7}})
    parsed = trace.parse_trace(json.dumps(odd).encode())
    assert [r.name for r in parsed.kernel_rows] == ["aten::mm"]
    with pytest.raises(Exception, match=r"neither a fusionviz session nor a torch\.profiler trace"):
        open_file(b'{"traceEvents": {"a": 1}}', "odd.json")
    with pytest.raises(Exception, match=r"cut\.json ends early, in the middle of its JSON \(line 1, column 18\)"):
        open_file(b'{"traceEvents": [', "cut.json")
    with pytest.raises(Exception, match="is not JSON"):
        open_file(b'{"traceEvents": [}', "bad.json")
    with pytest.raises(Exception, match="looks gzipped but cannot be decompressed"):
        open_file(b"\x1f\x8b\x08garbage", "bad.json.gz")
