"""Property-based fuzzing of the trace reader and the session loader: whatever a file holds, opening it and
using it as the app and `inspect` do either works or raises the project's own error, never another exception.
Inputs: generated traces of hostile fields, recorded H200 traces and sessions mutated at random (values
replaced or deleted, bytes flipped, cut or inserted), as JSON, plain bytes and gzip. The number tried is
printed at the end of the run (`fuzz: N inputs`)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (requirements-dev.txt)")

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing import FUZZ, HOSTILE, exercise, mutate
from tests.synthetic import gpu_trace

ROOT = Path(__file__).resolve().parents[2]
REAL_TRACE = json.loads(gzip.decompress((ROOT / "tests/data/h200_linear_ln_gelu_fp32_default.trace.json.gz")
                                        .read_bytes()))
REAL_SESSION = json.loads(gzip.decompress((ROOT / "sessions/h100_graph_break_512x256_float32.json.gz").read_bytes()))
FIELDS = ("ph", "cat", "name", "ts", "dur", "pid", "tid", "args")
ARGS = ("External id", "external id", "correlation", "stream", "grid", "block", "Input Dims", "kernel_file")


def _encodings(tree: Any, data: st.DataObject) -> bytes:
    raw = json.dumps(tree).encode()  # NaN and Infinity as the standard library writes them
    return gzip.compress(raw, mtime=0) if data.draw(st.booleans()) else raw


@st.composite
def hostile_events(draw: st.DrawFn) -> dict[str, Any]:
    """A trace event whose every field may be hostile, around a skeleton the reader takes seriously."""
    event: dict[str, Any] = {"ph": "X", "cat": draw(st.sampled_from(["cpu_op", "kernel", "cuda_runtime",
                                                                      "user_annotation", "gpu_memcpy", "Kernel"])),
                             "name": draw(st.sampled_from(["aten::mm", "ProfilerStep#0", "cudaLaunchKernel",
                                                           "triton_poi_fused_add_0", "Memcpy HtoD"])),
                             "ts": draw(st.floats(0, 1e3)), "dur": draw(st.floats(0, 1e2)), "pid": 1, "tid": 1,
                             "args": {"correlation": draw(st.integers(0, 3)), "External id": draw(st.integers(0, 3))}}
    for field in draw(st.lists(st.sampled_from(FIELDS), max_size=3)):
        event[field] = draw(HOSTILE)
    if isinstance(event.get("args"), dict):
        for arg in draw(st.lists(st.sampled_from(ARGS), max_size=3)):
            event["args"][arg] = draw(HOSTILE)
    return event


@FUZZ
@given(st.lists(hostile_events(), min_size=1, max_size=12), st.data())
def test_generated_traces_of_hostile_fields(events: list[dict[str, Any]], data: st.DataObject) -> None:
    exercise(_encodings({"traceEvents": events}, data))


@FUZZ
@given(st.data())
def test_recorded_trace_with_values_replaced(data: st.DataObject) -> None:
    tree = mutate(copy.deepcopy(REAL_TRACE), data, data.draw(st.integers(1, 6)))
    exercise(_encodings(tree, data), "mutated.trace.json")


@FUZZ
@given(st.data())
def test_recorded_session_with_values_replaced(data: st.DataObject) -> None:
    tree = copy.deepcopy(REAL_SESSION)
    if data.draw(st.booleans()):  # without kept traces, the stored rows and summaries are what is read
        for run in tree["runs"]:
            run["trace_gz_b64"] = None
    exercise(_encodings(mutate(tree, data, data.draw(st.integers(1, 6))), data), "mutated.json")


@FUZZ
@given(st.data())
def test_bytes_flipped_cut_or_inserted(data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(["trace", "session", "synthetic"]))
    tree = {"trace": REAL_TRACE, "session": REAL_SESSION, "synthetic": gpu_trace(4)}[source]
    raw = bytearray(_encodings(tree, data))
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(raw) - 1))
        action = data.draw(st.sampled_from(["flip", "cut", "insert", "truncate"]))
        if action == "flip":
            raw[at] ^= 1 << data.draw(st.integers(0, 7))
        elif action == "cut":
            del raw[at: at + data.draw(st.integers(1, 64))]
        elif action == "insert":
            raw[at:at] = data.draw(st.sampled_from([b"[", b"{", b"NaN", b'"', b"1e999", b"\x00", b"\xff\xfe"]))
        else:
            del raw[at:]
        if not raw:
            raw = bytearray(b"{}")
    exercise(bytes(raw))


@FUZZ
@given(st.recursive(HOSTILE, lambda children: st.lists(children, max_size=4) | st.dictionaries(
    st.sampled_from(["kind", "traceEvents", "runs", "config", "schema_version", "x"]), children, max_size=4),
    max_leaves=30))
def test_any_json_document(document: Any) -> None:
    exercise(json.dumps(document).encode())
