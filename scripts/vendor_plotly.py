"""Fetch ui/web/vendor/plotly-cartesian.min.js, the app's plotly.js: plotly.js's own cartesian bundle
(`plotly.js-cartesian-dist-min` on npm), at the version of the plotly.js that plotly.py ships.

Run it after a change of plotly in requirements.txt (tests/unit/test_middleware.py fails until then):
`python scripts/vendor_plotly.py`. It checks the tarball against the registry's sha512 before writing.
"""

import base64
import hashlib
import io
import json
import tarfile
import urllib.request
from pathlib import Path

from plotly.offline import get_plotlyjs_version

PACKAGE = "plotly.js-cartesian-dist-min"
TARGET = Path(__file__).resolve().parent.parent / "ui" / "web" / "vendor"

version = get_plotlyjs_version()
with urllib.request.urlopen(f"https://registry.npmjs.org/{PACKAGE}/{version}", timeout=60) as answer:
    dist = json.load(answer)["dist"]
with urllib.request.urlopen(dist["tarball"], timeout=60) as answer:
    tarball = answer.read()
algorithm, digest = dist["integrity"].split("-", 1)
if algorithm != "sha512" or base64.b64decode(digest) != hashlib.sha512(tarball).digest():
    raise SystemExit(f"{dist['tarball']} does not match the registry's {algorithm} digest")
with tarfile.open(fileobj=io.BytesIO(tarball)) as archive:
    for name, kept in (("package/plotly-cartesian.min.js", "plotly-cartesian.min.js"),
                       ("package/LICENSE", "plotly-cartesian.LICENSE")):
        member = archive.extractfile(name)
        assert member is not None, name
        (TARGET / kept).write_bytes(member.read())
print(f"{PACKAGE} {version} written to {TARGET}")
