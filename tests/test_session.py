"""The session file: round trips, and clear refusals of what it cannot read."""

import gzip
import json
from pathlib import Path

import pytest

from fusionviz.config import RunConfig
from fusionviz.session import SCHEMA_VERSION, Environment, Latency, ModeRun, Session, SessionFileError


def _session() -> Session:
    run = ModeRun(mode="eager", latency=Latency(1.0, 0.9, 1.2, [0.9, 1.0, 1.2], 10, "perf_counter"),
                  kernels=[{"iteration": 0, "name": "aten::mm", "short_name": "aten::mm", "kernel_class": "gemm",
                            "start_us": 1.0, "dur_us": 2.0, "stream": -1, "grid": "", "block": "",
                            "launch_op": "aten::mm", "input_shapes": "", "fused_ops": ["mm"], "source_file": "",
                            "graph": ""}])
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
