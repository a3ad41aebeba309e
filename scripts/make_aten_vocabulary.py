"""Regenerate fusionviz/records/aten_ops.txt, the ATen op names used to split fused kernel names.

Run with the torch you want to match: `python scripts/make_aten_vocabulary.py`.
"""

from pathlib import Path

import torch

ops = torch._C._dispatch_get_all_op_names()
names = sorted({op.split("::", 1)[1].split(".")[0] for op in ops if op.startswith("aten::")})
target = Path(__file__).resolve().parent.parent / "fusionviz" / "records" / "aten_ops.txt"
target.write_text("\n".join(names) + "\n")
print(f"{len(names)} names written to {target}")
