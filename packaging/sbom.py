"""cargo-cyclonedx's SBOM made reproducible and specific (packaging/release): its timestamp is
the commit's (SOURCE_DATE_EPOCH), its serial number a UUID derived from the version, commit and
architecture, the build folder SRC named /renard as in the binary (two builds of one commit:
the same bytes), its top component's version the
package's, and the compiler that built the binary recorded as a property.

Usage: python3 sbom.py IN.cdx.json SRC VERSION COMMIT ARCH RUSTC-VERSION   (the SBOM on stdout)
"""

import json
import os
import sys
import uuid
from datetime import UTC, datetime


def main(path: str, src: str, version: str, commit: str, arch: str, rustc: str) -> str:
    text = open(path, encoding="utf-8").read().replace(f"file://{src.rstrip('/')}/", "file:///renard/")
    bom = json.loads(text)
    bom["serialNumber"] = uuid.uuid5(uuid.NAMESPACE_URL, f"renard {version} {commit} {arch}").urn
    epoch = int(os.environ["SOURCE_DATE_EPOCH"])
    bom["metadata"]["timestamp"] = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    component = bom["metadata"]["component"]
    component["version"] = version
    component.setdefault("properties", []).extend(
        [
            {"name": "renard:commit", "value": commit},
            {"name": "renard:target", "value": f"{arch}-unknown-linux-musl"},
            {"name": "renard:rustc", "value": rustc},
        ]
    )
    return json.dumps(bom, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit("sbom.py: give IN.cdx.json SRC VERSION COMMIT ARCH RUSTC-VERSION")
    sys.stdout.write(main(*sys.argv[1:]))
