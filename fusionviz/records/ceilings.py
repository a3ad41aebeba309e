"""What the device can do at best, measured on it: the ceilings a roofline and every "% of peak" divide by."""

from __future__ import annotations

from dataclasses import dataclass, field

from fusionviz.records.decode import Count, Positive


@dataclass
class Ceilings:
    """Measured by a short calibration on the device (`measure.ceilings`), cached per device and torch version.

    `copy_gbps` is a large device-to-device copy's bytes read plus written per second (GB/s, 1e9 bytes), the
    bandwidth a memory-bound kernel can reach; `matmul_tflops` a large square matmul's rate by dtype name
    (`float32`, ...), at torch's default matmul precision. `vendor` holds the datasheet's figures where fusionviz
    knows the device, shown for reference only: nothing is computed from them."""

    device_name: str
    torch_version: str
    copy_gbps: Positive
    matmul_tflops: dict[str, Positive] = field(default_factory=dict)
    copy_bytes: Count = 0  # the size of the buffer copied
    matmul_sizes: dict[str, Count] = field(default_factory=dict)  # n of each dtype's n × n × n matmul
    threads: Count = 0  # torch's CPU thread count during the calibration (the CPU's figures depend on it)
    measured_at: str = ""
    vendor: dict[str, Positive] = field(default_factory=dict)  # "copy_gbps", "matmul_tflops.<dtype>"
