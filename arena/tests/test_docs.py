"""The documents stay true: the README's compact results table, docs/results.md's whole one and
the README's chart are what the arena prints and draws from the run archived beside them
(docs/runs/), every relative link of the README, CONTRIBUTING and docs/ leads to a file, every
repository path a Markdown page names in backticks exists, every docs/ page is reachable from
the README, and the two pages keep their sizes (README ≤ 200 lines, CONTRIBUTING ≤ 300).

When the table's columns change (report/readme.py), regenerate them from the archive:
    tar xJf docs/runs/RUN.tar.xz -C DIR && arena row --run DIR --chart docs/results.svg
and paste the rows under docs/results.md's header (`arena row --compact --run DIR`: the README's)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from archives import unpack as unpack_tar

from arena.core.columns import COMPACT_HEADER
from arena.core.model import Run
from arena.report import build, readme, svg

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CHART = REPO / "docs" / "results.svg"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")  # a markdown link's target, anchor dropped


def archived_run(tmp_path: Path) -> Path:
    """The run the README's table names (its `run YYYYMMDD-HHMMSS`), unpacked from docs/runs/."""
    (run_id,) = set(re.findall(r"docs/runs/(\d{8}-\d{6})\.tar\.xz", README.read_text()))
    return unpack_tar(REPO / "docs" / "runs" / f"{run_id}.tar.xz", tmp_path)


RESULTS = REPO / "docs" / "results.md"


def table_under(page: Path, header: str) -> list[str]:
    """page's table under header: its two lines, then every row up to the blank line."""
    lines = page.read_text().splitlines()
    start = lines.index(header.splitlines()[0])
    end = lines.index("", start)
    return lines[start:end]


def test_the_tables_are_what_arena_row_prints_from_the_archived_run(tmp_path):
    """The README's compact table (`arena row --compact`) and docs/results.md's whole one."""
    run_dir = archived_run(tmp_path)
    run = Run.read(run_dir)
    assert not readme.declared_tiers(run, REPO)  # the run records every entry's tier itself
    view = build(run)
    syscalls = readme.syscall_counts(run_dir)
    order = readme.readme_order(view)
    link = readme.readme_links(REPO)  # each entry of the compact table links to its README
    compact = [*COMPACT_HEADER.splitlines(), *(readme.compact_row(view, n, syscalls, link) for n in order)]
    assert table_under(README, COMPACT_HEADER) == compact
    assert table_under(RESULTS, readme.HEADER) == [
        *readme.HEADER.splitlines(),
        *(readme.row(view, n, syscalls) for n in order),
    ]
    assert readme.HEADER.splitlines()[0] not in README.read_text()  # the whole table is one link away


def test_the_readme_chart_is_what_the_arena_draws_from_the_archived_run(tmp_path):
    run = Run.read(archived_run(tmp_path))
    readme.declared_tiers(run, REPO)
    view = build(run)
    assert CHART.read_text() == svg.ranking_chart(view, readme.readme_order(view), readme.CAPPED) + "\n"
    assert f"]({CHART.relative_to(REPO)})" in README.read_text()


def test_arena_row_chart_draws_one_bar_per_row_in_the_rows_order(tmp_path):
    run_dir = archived_run(tmp_path / "run")
    chart = tmp_path / "chart.svg"
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "row", "rust", "php-fpm", "--run", str(run_dir), "--chart", str(chart)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    drawn = chart.read_text()
    labels = re.findall(r'class="label">([^<]*)<', drawn)
    assert labels == ["rust", "php-fpm"]
    (run_id,) = set(re.findall(r"docs/runs/(\d{8}-\d{6})\.tar\.xz", README.read_text()))
    assert drawn.startswith("<svg ") and "<style>" in drawn and f"run {run_id}" in drawn
    assert "6.89" in drawn and ">89.8<" in drawn  # the medians of the two rows' CPU cells


# docs/results.md's "How to read it" quotes the README's run: (entry, column of the README's
# table, how the page writes the cell: whole, or its median alone).
RESULTS_QUOTES = [
    ("rust", "keep-alive, capped: CPU µs/req", "median"),
    ("rust", "× nginx", "interval"),
    ("rust", "of floor", "interval"),
    ("cpp", "of floor", "interval"),
    ("cpp", "keep-alive, capped: CPU µs/req", "median"),
    ("floor", "keep-alive, capped: CPU µs/req", "median"),
    ("floor-uring", "keep-alive, capped: CPU µs/req", "median"),
    ("php-fpm", "req/s", "median"),
]


def test_results_walk_through_quotes_the_readmes_run(tmp_path):
    run_dir = archived_run(tmp_path)
    view = build(Run.read(run_dir))
    syscalls = readme.syscall_counts(run_dir)
    page = (REPO / "docs" / "results.md").read_text()
    walk = " ".join(page[page.index("## How to read it") : page.index("## Two processor kinds")].split())
    (run_id,) = set(re.findall(r"docs/runs/(\d{8}-\d{6})\.tar\.xz", README.read_text()))
    assert f"the README's run, `{run_id}`" in walk  # the page reads the run the README's table is
    for name, column, form in RESULTS_QUOTES:
        cell = readme.cells(view, name, syscalls)[readme.COLUMNS.index(column)]
        quoted = cell.split(" (")[0] if form == "median" else cell.split(" n.s.")[0].split(" ±")[0]
        assert quoted in walk, (name, column, quoted)


def test_arena_row_chart_into_a_missing_directory_is_one_line_and_exit_2(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "row", "--run", str(archived_run(tmp_path)), "--chart", "/none/c.svg"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "'--chart'" in p.stderr and "no such directory" in p.stderr, p.stderr
    assert p.stdout == ""


DOCS = sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md") if "examples" not in p.parts)
PAGES = ["README.md", "CONTRIBUTING.md", "arena/README.md", "servers/rust/README.md", *DOCS]


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_leads_to_a_file(page):
    path = REPO / page
    targets = [t for t in LINK.findall(path.read_text()) if "://" not in t]
    missing = [t for t in targets if not (path.parent / t).exists()]
    assert not missing, f"{page}: {missing}"


def test_every_docs_page_is_reachable_by_links_from_the_readme():
    """docs/*.md linked from the README itself; docs/arena/ and docs/rust/ through the READMEs of
    arena/ and servers/rust/."""
    reached, todo = set(), [README]
    while todo and len(reached) < 200:  # bounded: the repository has far fewer pages
        page = todo.pop()
        if page in reached or page.suffix != ".md" or not page.is_file():
            continue
        reached.add(page)
        todo += [(page.parent / t).resolve() for t in LINK.findall(page.read_text()) if "://" not in t]
    unreached = [d for d in DOCS if REPO / d not in reached]
    assert DOCS and not unreached, unreached
    assert {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")} <= set(LINK.findall(README.read_text()))


def test_the_readme_and_contributing_keep_their_sizes():
    assert len(README.read_text().splitlines()) <= 200
    assert len((REPO / "CONTRIBUTING.md").read_text().splitlines()) <= 300


# A repository path in a Markdown code span: checked against the tree, so a move leaves none stale.
CODE_PATH = re.compile(r"`((?:arena|spec|servers|peers|deploy|packaging|scripts|docs)/[^`\s]*)`")
PLACEHOLDER = re.compile(r"[{}<>*…]|VERSION|NAME|RUN|YYYY")
NOT_YET = {
    "servers/nim/": "CONTRIBUTING's walkthrough makes it (arena new nim)",
    "packaging/renard-archive-keyring.gpg": "committed when the release key is made (packaging/README.md)",
    "servers/js/node_modules": "the js entries' build makes it (npm install): make test-arena runs before any build",
}


def test_every_repository_path_the_markdown_names_exists():
    """In every tracked Markdown page (the archived runs aside), a path in backticks under one
    of the repository's folders names a file or folder: from the root, from the page's own
    folder, or (the arena's own way of naming its modules) from arena/src/."""
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True)
    pages = [page for page in listed.stdout.split() if not page.startswith("docs/runs/")]
    missing = []
    for page in pages:
        for path in CODE_PATH.findall((REPO / page).read_text()):
            path = path.rstrip(".,:;)")
            if PLACEHOLDER.search(path) or path in NOT_YET:
                continue
            bases = (REPO, (REPO / page).parent, REPO / "arena" / "src")
            if not any((base / path).exists() for base in bases):
                missing.append(f"{page}: {path}")
    assert pages and not missing, missing


RESULTS = REPO / "docs" / "results.md"


def blocks(path: Path, first: str) -> list[list[str]]:
    """Every run of lines of path from one starting with `first` up to the blank line."""
    lines = path.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(first)]
    return [lines[i : lines.index("", i)] for i in starts]


def test_the_prices_of_the_idiom_are_what_arena_row_prints_from_the_readmes_run(tmp_path):
    """Every production entry whose tuned renard the README's run measured, priced in the same
    run: docs/results.md's table, and the README saying each price inline."""
    from arena.report import idiom

    view = build(Run.read(archived_run(tmp_path)))
    prices = idiom.prices(view)
    (table,) = blocks(RESULTS, "| language | production entry |")
    assert table == idiom.markdown_of(view, prices)
    words = " ".join(README.read_text().split())
    assert len(prices) == 11 and all(f"`{p.production.name}` {idiom.price_cell(p)}" in words for p in prices)


SEED_RUN = "20261201-222226"  # docs/results.md, "The seed's programs again"


def test_the_seeds_table_again_is_what_its_archived_run_measured(tmp_path):
    from arena.report import format as fmt

    results = (REPO / "docs" / "results.md").read_text()
    assert f"`{SEED_RUN}`" in results and f"runs/{SEED_RUN}.tar.xz" in results
    view = build(Run.read(unpack_tar(REPO / "docs" / "runs" / f"{SEED_RUN}.tar.xz", tmp_path)))
    (keepalive,) = view.modes
    lines = results.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| seed's rank | program |"))
    for line in lines[start + 2 : lines.index("", start)]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = re.search(r"\(`([a-z0-9-]+)`\)", cells[1]).group(1)
        row = next(r for r in keepalive.rows if r.entry.name == name)
        measured = (readme.spread(row.summary("rps")), fmt.us(row.cpu.median), str(row.rank))
        assert (cells[4], cells[5], cells[7]) == measured
