"""scripts/flake (make flake) reaches the arena it drives: its imports follow the arena's
wings (it still imported arena.verify after the house moved it, and said "needs the harness")."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_flake_script_imports_the_harness_and_names_an_unknown_entry():
    p = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "flake"), "1", "no-such-entry"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2, p.stderr
    assert "ENTRY: not an `ours` entry: no-such-entry" in p.stderr
