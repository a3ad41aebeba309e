"""What the device can do at best, measured on it: the ceilings a roofline and every "% of peak" divide by.

A kernel whose bytes fit in a cache moves them at the cache's rate, not at the memory's: a 64 KB working set on
the CPU ran at 270% of a copy that left the caches. So the bandwidth is measured per level, a copy whose source
and target fit in the level as well as one that fits in none, and a kernel is held to the level its working set
fits in (`analysis.kernel_costs.memory_roof`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fusionviz.records.decode import Count, Positive


@dataclass
class CacheCeiling:
    """A copy's bandwidth (bytes read plus written per second, GB/s) where source and target together fit in one
    level of the device's cache: `level` ("L2", "L3"), its capacity as the device reports it (`size_bytes`; a
    CPU's private L2 is one core's), and the buffer copied (`copy_bytes`, a quarter of the capacity)."""

    level: str
    size_bytes: Count
    copy_gbps: Positive
    copy_bytes: Count


@dataclass
class Ceilings:
    """Measured by a short calibration on the device (`measure.ceilings`), cached per device and torch version.

    `copy_gbps` is a large device-to-device copy's bytes read plus written per second (GB/s, 1e9 bytes), the
    bandwidth a memory-bound kernel whose working set leaves the caches can reach (DRAM, HBM); `caches` the same
    copy where it fits in each level of cache, smallest first (empty in sessions recorded before they were
    measured, and where the device does not report its caches); `matmul_tflops` a large square matmul's rate by
    dtype name (`float32`, ...), at torch's default matmul precision. `vendor` holds the datasheet's figures where
    fusionviz knows the device, shown for reference only: nothing is computed from them."""

    device_name: str
    torch_version: str
    copy_gbps: Positive
    matmul_tflops: dict[str, Positive] = field(default_factory=dict)
    copy_bytes: Count = 0  # the size of the buffer copied
    matmul_sizes: dict[str, Count] = field(default_factory=dict)  # n of each dtype's n × n × n matmul
    threads: Count = 0  # torch's CPU thread count during the calibration (the CPU's figures depend on it)
    measured_at: str = ""
    vendor: dict[str, Positive] = field(default_factory=dict)  # "copy_gbps", "matmul_tflops.<dtype>"
    caches: list[CacheCeiling] = field(default_factory=list)
