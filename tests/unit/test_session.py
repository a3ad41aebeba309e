"""The session file: round trips, and clear refusals of what it cannot read."""

import gzip
import json
from pathlib import Path

import pytest

from fusionviz.errors import SessionFileError
from fusionviz.measure.protocol import DevicesJob, ModeJob, NaiveJob, SweepJob, decode_job, encode_job
from fusionviz.records.config import RunConfig, SweepRequest
from fusionviz.records.kernels import KernelRow
from fusionviz.records.session import SCHEMA_VERSION, Environment, Latency, ModeRun, Session


def _session() -> Session:
    run = ModeRun(mode="eager", latency=Latency(1.0, 0.9, 1.2, [0.9, 1.0, 1.2], 10, "perf_counter"),
                  kernels=[KernelRow(iteration=0, name="aten::mm", short_name="aten::mm", kernel_class="gemm",
                                     start_us=1.0, dur_us=2.0, stream=-1, grid="", block="", launch_op="aten::mm",
                                     op_id=3, input_shapes="", fused_ops=["mm"], source_file="", graph="")])
    return Session(config=RunConfig(modes=("eager",)), environment=Environment(device_name="cpu"), runs=[run])


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    original = _session()
    loaded = Session.load(original.save(tmp_path / f"s{suffix}"))
    assert loaded == original
    assert loaded.config.modes == ("eager",)
    assert loaded.runs[0].kernel_frame().loc[0, "fused_ops"] == ["mm"]


def test_unknown_fields_are_ignored_and_missing_ones_defaulted(tmp_path: Path) -> None:
    data = _session().to_dict()
    data["added_later"] = 1
    del data["runs"][0]["logs"]
    assert Session.from_dict(data).runs[0].logs == []


def test_newer_schema_is_refused() -> None:
    data = _session().to_dict()
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(SessionFileError, match="newer"):
        Session.from_dict(data)


def test_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"traceEvents": []}))
    with pytest.raises(SessionFileError, match="not a fusionviz session"):
        Session.load(path)
    path.write_bytes(gzip.compress(b"{not json"))
    with pytest.raises(SessionFileError, match="not JSON"):
        Session.load(path)


def test_damaged_session() -> None:
    data = _session().to_dict()
    data["runs"] = [{"mode": "eager", "latency": "fast"}]
    with pytest.raises(SessionFileError, match="damaged"):
        Session.from_dict(data)


def test_a_misspelt_kernel_key_is_an_error_not_a_nan_column() -> None:
    data = _session().to_dict()
    row = data["runs"][0]["kernels"][0]
    row["dur"] = row.pop("dur_us")
    with pytest.raises(SessionFileError, match="missing dur_us; unknown dur"):
        Session.from_dict(data)


def test_kernel_rows_from_before_op_id_existed_still_load() -> None:
    data = _session().to_dict()
    del data["runs"][0]["kernels"][0]["op_id"]
    assert Session.from_dict(data).runs[0].kernel_frame().op_id.tolist() == [-1]


def test_worker_jobs_round_trip() -> None:
    config = RunConfig(model="mlp", modes=("eager", "default"))
    for job in (DevicesJob(), ModeJob(config, "default"), NaiveJob(config, "default", 50),
                SweepJob(config, SweepRequest(sizes=[1, 2], strategies=["static"]))):
        assert decode_job(json.loads(json.dumps(encode_job(job)))) == job


def test_a_worker_reply_round_trips_with_its_kernel_rows() -> None:
    from fusionviz.measure.protocol import ModeReply, encode_reply
    from fusionviz.records.decode import decode

    session = _session()
    reply = ModeReply(environment=session.environment, run=session.runs[0])
    assert decode(ModeReply, json.loads(json.dumps(encode_reply(reply)))) == reply
    data = encode_reply(reply)
    data["run"]["kernels"][0]["dur_us"] = float("inf")
    with pytest.raises(ValueError, match=r"run.kernels\[0\].dur_us: expected `float` <= 1e\+18"):
        decode(ModeReply, data)
