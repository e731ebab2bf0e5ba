"""The house's import contracts (arena/pyproject.toml, run by `make lint`) each break on an
import that crosses them (ARCHITECTURE.md): a copy of the arena with one bad import planted, and
import-linter run on the copy, must report that contract broken and keep every other one.
The copy comes first on the path (PYTHONPATH), ahead of the editable install."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# Contract name (as in pyproject.toml) -> files to plant: path under src/arena -> text appended.
PLANTS = {
    "no circles among sibling modules, at any depth": {
        "core/planted_a.py": "from . import planted_b  # noqa\n",
        "core/planted_b.py": "from . import planted_a  # noqa\n",
    },
    # The wings of one layer are independent: curves importing stack (which never imports
    # curves) breaks the layers without making a circle.
    "the wings, high to low": {"curves/planted.py": "from .. import stack  # noqa\n"},
    "one module per command: none imports another, all may import options and common": {
        "cli/row.py": "from . import build  # noqa\n",
    },
    "click only in the command line": {"report/planted.py": "import click  # noqa\n"},
    "rich only in the command line and the console's ui": {"report/planted.py": "import rich  # noqa\n"},
    "scipy only in the statistics": {"bench/planted.py": "import scipy  # noqa\n"},
}


def lint_imports(root: Path) -> str:
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root / "src")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout + done.stderr


def arena_copy(tmp_path: Path) -> Path:
    root = tmp_path / "arena"
    shutil.copytree(ARENA / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(ARENA / "pyproject.toml", root)
    return root


def test_every_contract_is_planted_once():
    declared = (ARENA / "pyproject.toml").read_text()
    names = [line.split("=", 1)[1].strip().strip('"') for line in declared.splitlines() if line.startswith("name = ")]
    contracts = names[1:]  # the first is the project's name
    assert sorted(contracts) == sorted(PLANTS)


def test_the_unplanted_copy_keeps_every_contract(tmp_path):
    report = lint_imports(arena_copy(tmp_path))
    assert f"Contracts: {len(PLANTS)} kept, 0 broken." in report, report


@pytest.mark.parametrize("contract", list(PLANTS))
def test_a_planted_import_breaks_its_contract(tmp_path, contract):
    root = arena_copy(tmp_path)
    for path, text in PLANTS[contract].items():
        with open(root / "src/arena" / path, "a") as planted:
            planted.write(text)
    report = lint_imports(root)
    assert f"{contract} BROKEN" in report, report
    assert f"Contracts: {len(PLANTS) - 1} kept, 1 broken." in report, report
