"""`arena history`: the latest run's figures as ratios to its floor (absolute beside), the
changes of level in results/history.jsonl (or --file), with --html the trend page
(report/trend.py), and with --check exit 1 when the latest run makes a change appear; with
--backfill REV..REV, first the history replayed (workflows/backfill.py: counted, or --timed)."""

from __future__ import annotations

from pathlib import Path

import click

from ..analysis import history
from ..core.modes import MODES
from ..report import trend
from ..ui import console
from ..workflows import backfill
from .common import Failure, load_entries

TIMED_LOADS = [name for name, m in MODES.items() if not m.capped and f"{name}-capped" in MODES]  # keepalive, close


@click.command("history")
@click.argument("entries", nargs=-1)
@click.option("--file", "path", type=click.Path(dir_okay=False, path_type=Path), help="Default: results/history.jsonl")
@click.option("--include-quick", is_flag=True, help="Count quick runs too (left out by default).")
@click.option(
    "--absolute", is_flag=True, help="Find changes in the absolute figures (the machine's) instead of the ratios."
)
@click.option(
    "--check", is_flag=True, help="Exit 1 when the latest run makes a change of level appear (better or worse)."
)
@click.option(
    "--html",
    "html_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write the trend page, DIR/index.html: a chart per entry and figure, the changes marked.",
)
@click.option(
    "--commit-url",
    metavar="TEMPLATE",
    help="With --html: each change links to this URL, {commit} replaced (e.g. https://github.com/O/R/commit/{commit}).",
)
@click.option(
    "--backfill",
    "span",
    metavar="REV..REV",
    help="First replay these commits of ENTRY… (native: instructions per request, beside the floor; "
    "with --timed any entry, by time) into --file [results/backfill.jsonl].",
)
@click.option(
    "--timed",
    is_flag=True,
    help="With --backfill: measure each commit by time instead: rounds of ENTRY… then the floor, a fresh "
    "process per sample, the server's CPU per request capped; each round's ratio to the floor, their median "
    "and 95% interval. Per commit: --pairs × (--seconds + 1 s warm-up + ~1.2 s start and stop) for each "
    "entry and the floor, builds aside (said before the first).",
)
@click.option(
    "--mode",
    "load",
    type=click.Choice(TIMED_LOADS),
    default=None,
    help="With --timed: the load, measured capped (its -capped mode) [keepalive].",
)
@click.option("--pairs", type=click.IntRange(2, 100), default=None, help="With --timed: rounds per commit [6].")
@click.option("--seconds", type=click.IntRange(1, 60), default=None, help="With --timed: seconds per sample [2].")
@click.option(
    "--cpu-quota",
    type=click.FloatRange(0.05, 1.0),
    default=None,
    help="With --timed: the server's share of its core [0.5].",
)
@click.pass_context
def history_cmd(
    ctx,
    entries,
    path,
    include_quick,
    absolute,
    check,
    html_dir,
    commit_url,
    span,
    timed,
    load,
    pairs,
    seconds,
    cpu_quota,
):
    """The changes of level in the bench history (E-Divisive), each figure a ratio to the floor
    measured in the same run unless --absolute, with the commits between which each happened
    and its size with a 95% interval."""
    if commit_url is not None and "{commit}" not in commit_url:
        raise click.BadParameter("must contain {commit}", param_hint="'--commit-url'")
    how = _timed(span, timed, load, pairs, seconds, cpu_quota)
    if span is not None:
        path = path or ctx.obj["repo"] / "results" / BACKFILL_FILE
        _backfill(ctx, span, entries, path, how)
    path = path or ctx.obj["repo"] / "results" / history.FILE
    if not path.is_file():
        raise Failure(f"no history at {path}: each `arena bench` appends a line to it")
    lines = history.read(path)
    kept = [line for line in lines if include_quick or not line.get("quick")]
    if kept:
        _latest(kept[-1], entries)
    found = history.changes(lines, list(entries), include_quick, absolute)
    what = "absolute figures" if absolute else "ratios to the floor of each run"
    console.print(
        f"{len(lines)} runs in {path}; {len(found)} changes in the {what} "
        f"(E-Divisive, p < {history.PVALUE}; a count: a step beyond 1%)",
        soft_wrap=True,
    )
    for change in found:
        console.print(change.words(), highlight=False, soft_wrap=True, markup=False)
    if not absolute and not any(
        r in f for line in kept for m in line.get("entries", {}).values() for f in m.values() for r in history.ABSOLUTE
    ):
        console.print("no ratio to a floor in these runs (written before them, or without a floor): see --absolute")
    if html_dir is not None:
        trends = history.trends(lines, list(entries), include_quick, absolute)
        written = trend.write_page(trends, html_dir, path.name, commit_url)
        console.print(f"trend page: {written} ({len(trends)} charts)", highlight=False, soft_wrap=True, markup=False)
    if not check:
        return
    new = history.new_changes(lines, list(entries), include_quick, absolute)
    latest = kept[-1]["run_id"] if kept else "none"
    console.print(f"{len(new)} new at the latest run ({latest})", highlight=False, soft_wrap=True, markup=False)
    for change in new:
        console.print(f"new: {change.words()}", highlight=False, soft_wrap=True, markup=False)
    if new:
        raise click.exceptions.Exit(1)


def _latest(line: dict, entries: tuple[str, ...]) -> None:
    """The latest run's figures: each ratio to the floor with its absolute figure beside."""
    console.print(
        f"latest run {line['run_id']} (commit {(line.get('commit') or 'none')[:12]}):", highlight=False, soft_wrap=True
    )
    for entry, modes in sorted(line.get("entries", {}).items()):
        if entries and entry not in entries:
            continue
        for mode_name, figures in sorted(modes.items()):
            cells = [
                f"{history.METRICS[ratio][0]} {figures[ratio]:.3g} ({history.figure(figures[absolute])} "
                f"{history.METRICS[absolute][0]})"
                for ratio, absolute in history.ABSOLUTE.items()
                if ratio in figures and absolute in figures
            ]
            if cells:
                console.print(
                    f"  {entry} {mode_name}: {'; '.join(cells)}", highlight=False, soft_wrap=True, markup=False
                )


BACKFILL_FILE = "backfill.jsonl"


def _timed(span, timed, load, pairs, seconds, cpu_quota) -> backfill.Timed | None:
    """How a timed replay measures (backfill.Timed), None when not timed; raises BadParameter
    for a timing flag without --timed, or --timed without --backfill."""
    given = {"--mode": load, "--pairs": pairs, "--seconds": seconds, "--cpu-quota": cpu_quota}
    if not timed:
        flag = next((f for f, value in given.items() if value is not None), None)
        if flag:
            raise click.BadParameter("is only for a timed replay (--backfill … --timed)", param_hint=f"'{flag}'")
        return None
    if span is None:
        raise click.BadParameter("replays commits: give --backfill REV..REV", param_hint="'--timed'")
    chosen = {"pairs": pairs, "seconds": seconds, "cpu_quota": cpu_quota}
    return backfill.Timed(
        mode_name=f"{load or 'keepalive'}-capped", **{k: v for k, v in chosen.items() if v is not None}
    )


def _backfill(ctx, span: str, names: tuple[str, ...], path: Path, timed: backfill.Timed | None) -> None:
    """Replays span for the named entries into path (workflows/backfill.py)."""
    start, sep, end = span.partition("..")
    if not (start and sep and end):
        raise click.BadParameter(f"{span!r} is not a range REV..REV", param_hint="'--backfill'")
    if not names:
        raise click.BadParameter("names no ENTRY: give the entries to replay", param_hint="'--backfill'")
    chosen = load_entries(ctx, names)
    floors = {e.floor for e in chosen}
    if len(floors) != 1:
        raise click.BadParameter(
            f"the entries divide by different floors ({', '.join(sorted(floors))})", param_hint="'--backfill'"
        )
    floor = load_entries(ctx, (floors.pop(),))[0]
    path.parent.mkdir(parents=True, exist_ok=True)
    say = lambda line: console.print(line, highlight=False, soft_wrap=True, markup=False)  # noqa: E731
    try:
        written = backfill.replay(ctx.obj["repo"], span, chosen, floor, path, say=say, timed=timed)
    except backfill.BackfillError as err:
        raise Failure(str(err)) from None
    say(f"backfill: {written} lines appended to {path}")
