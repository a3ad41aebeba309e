"""One test per cap (records/limits.py): a file over it is refused at once with one line naming the cap and its
variable; the work done before refusing is bounded by the cap, not by the file. And the linear-time paths:
names and step counts that were cubic or quadratic."""

from __future__ import annotations

import gzip
import json
import tomllib
import tracemalloc
import zlib
from pathlib import Path

import pytest

from fusionviz.errors import SessionFileError
from fusionviz.records.files import open_file, open_path
from fusionviz.records.kernels import fused_ops_from_name, short_name
from fusionviz.records.limits import MB, Limits, inflate, inflated, read_file
from tests.synthetic import encoded, gpu_trace

ROOT = Path(__file__).resolve().parents[2]


def _refused(cap_variable: str, raw: bytes, name: str = "f.json.gz") -> str:
    with pytest.raises(SessionFileError) as info:
        open_file(raw, name)
    message = str(info.value)
    assert cap_variable in message and "\n" not in message, message
    return message


def test_file_cap_is_the_upload_limit_and_is_read_no_further(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == Limits().file_mb
    monkeypatch.setenv("FUSIONVIZ_MAX_FILE_MB", "1")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MB + 1))
    with pytest.raises(SessionFileError, match="FUSIONVIZ_MAX_FILE_MB"):
        open_path(big)
    _refused("FUSIONVIZ_MAX_FILE_MB", b" " * (MB + 1), "big.json")
    with pytest.raises(SessionFileError, match="FUSIONVIZ_MAX_FILE_MB"):  # a device that never ends
        read_file(Path("/dev/zero"))
    with pytest.raises(SessionFileError, match="is a directory"):
        read_file(tmp_path)


def test_a_gzip_bomb_stops_at_the_inflated_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSIONVIZ_MAX_INFLATED_MB", "4")
    bomb = gzip.compress(b"[" + b" " * (256 * MB) + b"]", compresslevel=9)  # 256 MB inflated, 250 KB on disk
    tracemalloc.start()
    message = _refused("FUSIONVIZ_MAX_INFLATED_MB", bomb)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "inflates to more than 4 MB" in message
    assert peak < 16 * MB, f"{peak / MB:.0f} MB held while refusing a 4 MB cap"
    _refused("FUSIONVIZ_MAX_INFLATED_MB", b"[" + b" " * (5 * MB) + b"]", "plain.json")  # plain JSON too


def test_a_bomb_is_refused_before_a_reader_gets_any_of_its_text() -> None:
    """One event whose name is the whole text: the streaming reader's parts are handed out only once the stream was
    counted whole, so nothing decodes a byte of a file over the cap (its work on this text took 14 s here)."""
    bomb = gzip.compress(b'{"traceEvents":[{"name":"' + b"a" * (8 * MB) + b'"}]}', compresslevel=9)
    with pytest.raises(SessionFileError, match="inflates to more than 4 MB"):
        inflated(bomb, "bomb.json.gz", Limits(inflated_mb=4))  # at the call, before the first part
    assert sum(map(len, inflated(bomb, "bomb.json.gz", Limits(inflated_mb=16)))) > 8 * MB


def test_several_gzip_members_and_damaged_streams() -> None:
    two = gzip.compress(b'{"traceEvents": [', mtime=0) + gzip.compress(b"]}", mtime=0)
    assert inflate(two, "two.gz", Limits()) == b'{"traceEvents": []}'
    whole = encoded(gpu_trace(2))
    with pytest.raises(SessionFileError, match="truncated gzip"):
        open_file(whole[: len(whole) // 2], "cut.json.gz")
    with pytest.raises(SessionFileError, match="cannot be decompressed"):
        open_file(whole[:10] + b"\x00" * 40 + whole[50:], "corrupt.json.gz")
    assert zlib.decompress(whole, 31)  # the intact file is fine


def test_events_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = encoded(gpu_trace(10))  # 80 events
    assert open_file(raw, "t.json.gz").runs[0].summary.iterations == 10
    monkeypatch.setenv("FUSIONVIZ_MAX_EVENTS", "50")
    message = _refused("FUSIONVIZ_MAX_EVENTS", raw)
    assert "holds 80 events" in message


def test_name_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = gpu_trace(1, name="triton_poi_fused_" + "add_" * 5000 + "0")  # 20 KB name
    _refused("FUSIONVIZ_MAX_NAME_CHARS", encoded(trace))
    monkeypatch.setenv("FUSIONVIZ_MAX_NAME_CHARS", "100000")
    assert open_file(encoded(trace), "t.json.gz").runs[0].kernels[0].fused_ops[:2] == ["add", "add"]


def test_steps_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSIONVIZ_MAX_STEPS", "5")
    assert "holds 6 profiled iterations" in _refused("FUSIONVIZ_MAX_STEPS", encoded(gpu_trace(6)))


def test_a_cap_that_is_not_a_number_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSIONVIZ_MAX_EVENTS", "lots")
    with pytest.raises(SessionFileError, match="FUSIONVIZ_MAX_EVENTS='lots'"):
        open_file(encoded(gpu_trace(1)), "t.json.gz")


def test_nesting_deeper_than_any_parser_stack_is_refused() -> None:
    deep = b'{"traceEvents": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}"
    with pytest.raises(SessionFileError, match="nests deeper"):
        open_file(deep, "deep.json")
    with pytest.raises(SessionFileError, match="nests deeper"):
        open_file(b"[" * 100_000 + b"]" * 100_000, "deep.json")


@pytest.mark.timeout(60)  # the old cubic split took 22-26 s for 8 KB and never finished 10 MB
def test_long_inductor_names_split_in_linear_time() -> None:
    words = ["add", "mul", "native", "layer", "norm", "relu", "x"] * 30_000  # 1.2 MB
    name = "triton_poi_fused_" + "_".join(words) + "_0"
    ops = fused_ops_from_name(name)
    assert ops[:6] == ("add", "mul", "native_layer_norm", "relu", "x", "add")
    assert short_name("void k<" + "a" * 1_000_000 + ">(int)") == "k"
    assert short_name("void at::native::k<" + "A" + "b" * 100_000 + "Functor>(int)").startswith("k<A")


@pytest.mark.timeout(120)  # the steps cap read, summarised and laid out (16,000 steps took 72 s in the app before)
def test_ten_thousand_steps_read_and_summarise() -> None:
    from fusionviz.analysis.report import analyse
    from fusionviz.charts.timeline_layout import timeline_bars
    from fusionviz.cli.inspection import inspect_report

    session = open_file(encoded(gpu_trace(10_000, 1)), "steps.json.gz")
    report = inspect_report(analyse(session), "steps", top=5)
    assert report["runs"][0]["steps"] == [1] * 10_000 and len(report["runs"][0]["idle"]) == 10_000
    assert len(timeline_bars(session, all_iterations=True)) >= 20_000
    json.dumps(report, allow_nan=False)
