"""arena: renard's benchmark harness (entries, build, verify, bench, report)."""

__version__ = "0.1.0"
