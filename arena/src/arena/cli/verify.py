"""`arena verify ENTRY…`: the conformance runner against each entry (the matrix of cases), or
its whole suite against our entries (--full, --soak), --jobs N suites at once."""

from __future__ import annotations

from pathlib import Path

import click

from ..conformance.verify import EntryVerdicts, verify_entry
from ..entries.manifest import Entry
from ..ui import console, spinner, verify_matrix
from ..workflows.verify_full import verify_full
from .common import Failure, ensure_built, load_entries


def run_verification(ctx, chosen: list[Entry], quick: bool, log_dir: Path) -> list:
    """verify_entry for each available entry (built first when needed), with progress."""
    out = []
    for e in chosen:
        if not e.available:
            console.print(f"[yellow]skip[/] {e.name}: {e.reason}")
            continue
        problem = ensure_built(e, log_dir)
        if problem:
            out.append(EntryVerdicts(e, [], problem))
            continue
        with spinner() as p:
            p.add_task(f"verifying {e.name}", total=None)
            out.append(verify_entry(ctx.obj["repo"], e, quick=quick))
    return out


@click.command("verify")
@click.argument("entries", nargs=-1)
@click.option("--quick", is_flag=True, help="The runner's quick statistical checks.")
@click.option(
    "--full",
    is_flag=True,
    help="The runner's whole suite (slow cases, SPEC §1, restart, limits, "
    "robustness) against each `ours` entry, from its `command`.",
)
@click.option(
    "--soak",
    is_flag=True,
    help="With --full: only the long runs, 10 min of wrk and 20 s of slowloris at the cap (make soak).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --full: N suites at once, each entry's log and record as when alone; closing lines "
    "as suites end, the table in the entries' order. Default: 2 (1 on a 1-core machine; 1 with --soak); "
    "1 runs them one after another.",
)
@click.pass_context
def verify_cmd(ctx, entries, quick, full, soak, jobs):
    """Run the conformance cases against ENTRIES; exit 1 when an `ours` entry fails one."""
    if jobs is not None and not (full or soak):
        raise click.UsageError("--jobs: only with --full or --soak (it runs whole suites at once)")
    if full or soak:
        failed = verify_full(
            ctx.obj["repo"], [e for e in load_entries(ctx, entries) if e.kind == "ours"], soak, ensure_built, jobs
        )
        if failed:
            raise Failure(f"the suite failed for {', '.join(failed)}")
        return
    results = run_verification(ctx, load_entries(ctx, entries), quick, ctx.obj["repo"] / "results" / "logs")
    if not results:
        raise Failure("no available entry to verify")
    console.print(verify_matrix(results))
    for r in results:
        if r.error:
            console.print(f"[red]{r.entry.name}[/]: {r.error}", markup=True, highlight=False)
        for o in r.outcomes:
            if o.verdict == "fail" and r.entry.kind == "ours":
                console.print(f"[red]FAIL[/] {r.entry.name} {o.name}: {o.detail}", highlight=False)
    ours = [r for r in results if r.entry.kind == "ours"]
    if ours:  # the closing line counts our entries' cases; peers may differ from the spec
        passed = sum(r.counts()["pass"] + r.counts()["alt"] for r in ours)
        failed = sum(r.counts()["fail"] + (r.error is not None) for r in ours)
        console.print(f"verify: {passed} passed, {failed} failed", highlight=False)
    bad = [r.entry.name for r in ours if r.failed]
    if bad:
        raise Failure(f"conformance failed for {', '.join(bad)}")
