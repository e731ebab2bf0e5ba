"""report.html of the golden run (tests/fixtures/golden) as headless Chromium lays it out: what
a reader sees. A script added to a copy of the page writes the boxes the browser measured
(headings, table rows, legend labels, charts, bars) into the page, and --dump-dom returns it."""

from __future__ import annotations

import html
import json
import re
from itertools import combinations
from pathlib import Path

import pytest
from archives import unpack
from browser import ABSENT, CHROMIUM, chromium
from click.testing import CliRunner

from arena.cli import cli

GOLDEN = Path(__file__).parent / "fixtures" / "golden" / "recorded-run.tar.xz"
WINDOW = "1280,1000"  # px: a laptop's window
ROW_SLACK_PX = 1.0  # rows of one height: within a pixel (sub-pixel rounding)
FULL_WIDTH = 0.95  # a chart at least this share of the width its container gives it
SHORTEST_BAR = 0.05  # a latency chart's shortest bar at least this share of its longest

MEASURE = """<script>
const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
const measured = {
  headings: [...document.querySelectorAll("h2")].map(h => h.textContent),
  tables: [...document.querySelectorAll("table")].map(t => ({
    headers: [...t.tHead.rows[0].cells].map(c => c.textContent),
    heights: [...t.tBodies[0].rows].map(r => r.getBoundingClientRect().height),
  })),
  charts: [...document.querySelectorAll("svg.chart")].map(s => ({
    metric: s.dataset.metric || "",
    title: (s.querySelector("title") || s).textContent.slice(0, 120),
    width: s.getBoundingClientRect().width,
    room: s.parentElement.clientWidth,
    legend: [...s.querySelectorAll(".legend text, .legend rect")].map(box),
    bars: [...s.querySelectorAll("rect.bar")].map(r => r.getBoundingClientRect().width),
  })),
};
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify(measured);
document.body.appendChild(out);
</script>"""


def measure(page: Path, tmp_path: Path) -> dict:
    """What Chromium measured on a copy of page (MEASURE added before </body>)."""
    measuring = page.with_name("measuring.html")
    measuring.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = chromium(tmp_path, f"--window-size={WINDOW}", "--dump-dom", measuring.as_uri()).stdout
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script wrote nothing: " + dom[-300:]
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict:
    """The golden run's report.html, rendered now, as Chromium lays it out."""
    if not CHROMIUM.exists():
        pytest.skip(ABSENT)
    run_dir = unpack(GOLDEN, tmp_path_factory.mktemp("golden"))
    result = CliRunner().invoke(cli, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    return measure(run_dir / "report.html", tmp_path_factory.mktemp("chromium"))


def ranked(seen: dict) -> list[dict]:
    """The ranked tables (a mode's: its first column is the rank, #)."""
    tables = [t for t in seen["tables"] if t["headers"][:1] == ["#"]]
    assert len(tables) == 5, [t["headers"][:2] for t in seen["tables"]]  # the golden run's five modes
    return tables


def overlap(a: list[float], b: list[float]) -> bool:
    """Two boxes [left, top, right, bottom] share an area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_the_page_leads_with_the_readmes_ranking_ranked_on_cpu_per_request(seen):
    first = seen["headings"][0]
    assert first.startswith("Server CPU µs per request, the README's ranking: keepalive-capped"), first
    headers = ranked(seen)[0]["headers"]
    assert headers[:5] == ["#", "entry", "language", "tier", "CPU µs/req median (min–max)"]
    assert seen["charts"][0]["metric"] == "cpu_us_per_req"  # its chart draws what it ranks on


def test_every_row_of_a_ranked_table_is_one_height(seen):
    for table in ranked(seen):
        heights = table["heights"]
        assert max(heights) - min(heights) <= ROW_SLACK_PX, (table["headers"][4], heights)


def test_no_two_legend_labels_or_keys_of_a_chart_overlap(seen):
    legends = [c for c in seen["charts"] if len(c["legend"]) > 1]
    assert legends, "no chart has a legend"
    for chart in legends:
        for a, b in combinations(chart["legend"], 2):
            assert not overlap(a, b), (chart["title"], a, b)


def test_every_chart_takes_the_width_the_page_gives_it(seen):
    for chart in seen["charts"]:
        assert chart["width"] >= FULL_WIDTH * chart["room"], (chart["title"], chart["width"], chart["room"])


def test_a_latency_charts_shortest_bar_is_still_read(seen):
    latency = [c for c in seen["charts"] if c["metric"] == "latency"]
    assert len(latency) == 4  # the timed modes: all but pipeline16
    for chart in latency:
        assert min(chart["bars"]) >= SHORTEST_BAR * max(chart["bars"]), chart["title"]
