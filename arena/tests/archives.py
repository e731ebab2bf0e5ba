"""Unpacking the repository's own tarballs (the golden run, docs/runs/) in the tests."""

import tarfile
from pathlib import Path

# tarfile's extraction filters came with Python 3.11.4 (PEP 706); Debian 12's python3 is 3.11.2,
# which rejects the keyword (found by make test-fresh). Where there is no filter, these archives
# are the repository's own, tracked by git, and unpacked as they are.
FILTER = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, **FILTER)
    return into
