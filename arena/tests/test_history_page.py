"""arena history --html DIR: the trend page in headless Chromium, from a synthetic history whose
answer is known: one chart per entry and figure, grouped by tier as the ranking orders them,
each run a point (with its interval when the history has one), the change marked and linked to
its commit, the screenshot the size asked and not blank."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from browser import ABSENT, CHROMIUM, chromium
from test_report import png_size

COMMIT_URL = "https://example.invalid/commit/{commit}"


def history_file(tmp_path: Path) -> Path:
    """20 runs: rust 1.3x its floor, then 1.0x from run 12 (commit "12"*20); nginx-lua steady."""
    rng = np.random.default_rng(5)
    lines = []
    for i in range(20):
        cost = (1.3 if i < 12 else 1.0) * rng.normal(1, 0.01)
        rust = {
            "cpu_us_per_req": 5 * cost,
            "cpu_of_floor": cost,
            "cpu_of_floor_lo": cost * 0.98,
            "cpu_of_floor_hi": cost * 1.02,
        }
        nginx = {"cpu_us_per_req": 7.0, "cpu_of_floor": 1.4 * rng.normal(1, 0.01)}
        lines.append(
            {
                "run_id": f"run{i:02d}",
                "commit": f"{i:02d}" * 20,
                "quick": False,
                "tiers": {"rust": "tuned", "nginx-lua": "infrastructure"},
                "entries": {"nginx-lua": {"keepalive": nginx}, "rust": {"keepalive": rust}},
            }
        )
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not CHROMIUM.exists(), reason=ABSENT)
def test_the_trend_page_draws_a_chart_per_entry_and_figure_with_the_change_linked_to_its_commit(tmp_path):
    done = arena("history", "--file", str(history_file(tmp_path)), "--html", str(tmp_path / "page"),
                 "--commit-url", COMMIT_URL)  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = tmp_path / "page" / "index.html"
    dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert dom.count('class="chart"') == 2
    assert dom.index('data-entry="rust"') < dom.index('data-entry="nginx-lua"')  # tuned before infrastructure
    assert dom.index("<h2>tuned</h2>") < dom.index("<h2>infrastructure</h2>")
    assert dom.count('<circle class="run"') == 40 and dom.count('<line class="interval"') == 20  # rust's only
    assert dom.count('<line class="change"') == 1 and f'href="{COMMIT_URL.format(commit="12" * 20)}"' in dom
    assert "in commits 111111111111..121212121212" in dom and dom.count('<li class="found">') == 1
    assert "<title>111111111111..121212121212</title>" in dom  # the chart's label: 1212121, the range as tooltip
    shot = tmp_path / "page.png"
    chromium(tmp_path, "--window-size=1400,900", f"--screenshot={shot}", page.as_uri())
    data = shot.read_bytes()
    assert png_size(data) == (1400, 900) and len(data) > 30_000  # blank: ~6 kB; a heading and a line: ~14 kB


def test_a_commit_url_without_its_placeholder_is_bad_usage(tmp_path):
    done = arena(
        "history", "--file", str(history_file(tmp_path)), "--html", str(tmp_path), "--commit-url", "https://x/"
    )
    assert done.returncode == 2 and "'--commit-url': must contain {commit}" in done.stderr
