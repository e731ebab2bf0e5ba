"""`arena footprint`: the fixture run (fixtures/run_sample.json: rust, nginx-lua, java-seed
available, zig not) joined with image sizes written as deploy/images/test_images.py writes
them; bad size files are one-line errors naming the file and the key."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.core.model import Run
from arena.footprint import images, table

FIXTURE = Path(__file__).parent / "fixtures" / "run_sample.json"


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=60)


def sizes(folder: Path, **records: tuple[int, int]) -> Path:
    folder.mkdir(exist_ok=True)
    for name, (base, image) in records.items():
        (folder / f"{name}.json").write_text(json.dumps({"entry": name, "base_bytes": base, "image_bytes": image}))
    return folder


def test_a_row_joins_the_image_the_installed_size_the_peak_rss_and_the_median_start_up(tmp_path):
    found = images.read(sizes(tmp_path / "images", rust=(0, 661_000), **{"java-seed": (46_700_000, 47_600_000)}))
    rows = {r.entry: table.cells(r) for r in table.rows(Run.read(FIXTURE), found)}
    assert list(rows) == ["rust", "nginx-lua", "java-seed"]  # zig is unavailable: no row
    assert rows["rust"] == ["rust", "scratch", "661 kB", "100%", "661 kB", "612 kB", "2.0 MB", "3.1"]
    assert rows["java-seed"] == ["java-seed", "46.7 MB", "900 kB", "2%", "47.6 MB", "8.5 kB", "75.0 MB", "310"]
    assert rows["nginx-lua"][1:5] == ["–"] * 4  # no image sized


def test_the_command_prints_the_markdown_table(tmp_path):
    folder = sizes(tmp_path / "images", rust=(0, 661_000))
    result = arena("footprint", "--run", str(FIXTURE), "--images", str(folder))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("| entry | base image | app | app share |")
    assert lines[2] == "| rust | scratch | 661 kB | 100% | 661 kB | 612 kB | 2.0 MB | 3.1 |"
    assert len(lines) == 2 + 3


@pytest.mark.parametrize(
    "record, message",
    [
        ('{"entry": "rust", "base_bytes": 0}', "rust.json: image_bytes: missing or not an integer"),
        ('{"entry": 3, "base_bytes": 0, "image_bytes": 1}', "rust.json: entry: missing or not a string"),
        ('{"entry": "rust", "base_bytes": 5, "image_bytes": 5}', "rust.json: base_bytes: 5 is not within 0"),
        ("[1]", "rust.json: not a JSON object"),
        ("{", "rust.json: not JSON"),
    ],
)
def test_a_bad_size_file_is_one_line_naming_it(tmp_path, record, message):
    (tmp_path / "rust.json").write_text(record)
    result = arena("footprint", "--run", str(FIXTURE), "--images", str(tmp_path))
    assert result.returncode == 1
    assert message in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
