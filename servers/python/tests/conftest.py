"""Shared paths for the tests: the repository root (spec/vectors) and this entry's launcher."""

from pathlib import Path

ENTRY = Path(__file__).resolve().parents[1]
REPOSITORY = ENTRY.parents[1]
VECTORS = REPOSITORY / "spec" / "vectors"
