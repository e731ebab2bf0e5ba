"""The `arena` command: entries (list, new, check), builds and tests (build, test, verify), measuring
(run, bench, instructions, gate, latency, sweep, history) and reports (report, compare)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import click

from . import check, crossrun, entrytests, instructions, newentry
from .commands.bench import bench_cmd
from .commands.common import Failure, check_cpus, ensure_built, find_repo, load_entries, parse_listen, publish
from .commands.row import row_cmd
from .entries import Entry, ManifestError, discover, load_manifest, select
from .gate import GateError, gate_config, run_gate
from .gate import Options as GateOptions
from .loadcli import COMMANDS as LOAD_COMMANDS
from .model import MODES
from .process import Launch, StartError, free_port, start
from .syscallcli import syscalls_cmd
from .ui import build_with_spinner, console, entries_table, err_console, spinner, verify_matrix
from .verify import EntryVerdicts, verify_entry, verify_full

__all__ = ["Failure", "check_cpus", "cli", "ensure_built", "find_repo", "load_entries", "main", "parse_listen"]

# --- commands ---------------------------------------------------------------------------


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The renard checkout (default: the one arena is installed from).",
)
@click.version_option(package_name="arena")
@click.pass_context
def cli(ctx: click.Context, repo: Path | None):
    """renard's benchmark harness: entries, builds, conformance, benchmarks, reports."""
    ctx.obj = {"repo": find_repo(repo)}


@cli.command("list")
@click.pass_context
def list_cmd(ctx):
    """A table of the entries: language, kind and availability."""
    console.print(entries_table(load_entries(ctx, ())))


@cli.command()
@click.argument("entry")
@click.option("--listen", default="127.0.0.1:8080", show_default=True, help="HOST:PORT (numeric).")
@click.option("--count", type=click.IntRange(1, 1_000_000), default=21, show_default=True)
@click.option("--location", default="https://avatar.example.org/Renard-{n}.png", show_default=True)
@click.option("--threads", type=click.IntRange(1, 1024), default=None, help="Default: the CPUs available.")
@click.pass_context
def run(ctx, entry, listen, count, location, threads):
    """Build if needed and run ENTRY in the foreground; Ctrl-C stops it."""
    (e,) = load_entries(ctx, (entry,))
    if not e.available:
        raise Failure(f"{e.name} is unavailable: {e.reason}")
    if "{n}" not in location:
        raise click.BadParameter("must contain {n}", param_hint="'--location'")
    host, port = parse_listen(listen)
    if port == 0 and e.ready == "port":
        port = free_port(host)  # a peer cannot report the port it picked
    problem = ensure_built(e, ctx.obj["repo"] / "results" / "logs")
    if problem:
        raise Failure(problem)
    launch = Launch(
        host=host, port=port, count=count, location=location, threads=threads or len(os.sched_getaffinity(0))
    )
    server = start(e, launch, echo=lambda line: print(line, file=sys.stderr, flush=True), inherit_stdout=True)
    signal.signal(signal.SIGTERM, _interrupt)  # `kill arena` stops the entry like Ctrl-C
    try:
        server.wait_ready()
        if e.ready == "port":
            host_text = f"[{host}]" if ":" in host else host
            print(f"listening on http://{host_text}:{server.port}", file=sys.stderr, flush=True)
        status = server.proc.wait()
    except StartError as err:
        raise Failure(str(err)) from None
    except KeyboardInterrupt:
        status = server.stop()
        print(f"arena: stopped {e.name} (exit status {status})", file=sys.stderr)
        return
    server.stop()
    if status != 0:
        raise Failure(f"{e.name} exited with status {status}")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@cli.command("build")
@click.argument("entries", nargs=-1)
@click.pass_context
def build_cmd(ctx, entries):
    """Build ENTRIES (default: all available); a failure does not stop the others."""
    chosen = load_entries(ctx, entries)
    log_dir = ctx.obj["repo"] / "results" / "logs"
    failed = []
    for e in chosen:
        if not e.available:
            console.print(f"[yellow]skip[/] {e.name}: {e.reason}")
            continue
        if not e.build:
            console.print(f"[green]ok[/]   {e.name}: nothing to build")
            continue
        result = build_with_spinner(e, log_dir)
        if result.ok:
            console.print(f"[green]ok[/]   {e.name}: built in {result.seconds:.1f} s")
        else:
            failed.append(e.name)
            console.print(
                f"[red]FAIL[/] {e.name}: `{result.failed_command}` failed after {result.seconds:.1f} s; "
                f"log {result.log}, last lines:"
            )
            console.print(result.tail(), markup=False, highlight=False)
    if failed:
        raise Failure(f"build failed: {', '.join(failed)}")


@cli.command("test")
@click.argument("entries", nargs=-1)
@click.pass_context
def test_cmd(ctx, entries):
    """Build each entry when needed, then run its own tests (`test` in entry.toml, in its
    folder); exit 1 when one fails.

    An `ours` entry whose runtime is missing fails too: its tests would otherwise be lost."""
    failed, ran = [], 0
    log_dir = ctx.obj["repo"] / "results" / "logs"
    for e in load_entries(ctx, entries):
        if not e.test:
            continue
        if not e.available:
            console.print(f"[yellow]skip[/] {e.name}: {e.reason}")
            if e.kind == "ours":
                failed.append(e.name)
            continue
        if ensure_built(e, log_dir) is not None:
            failed.append(e.name)
            continue
        log = log_dir / f"{e.name}.test.log"
        log.unlink(missing_ok=True)
        for command in e.test:
            console.print(f"[bold]{e.name}[/]: {command}", highlight=False)
            ran += 1
            if entrytests.run_logged(command, e.folder, log) != 0:
                failed.append(e.name)
                break
    for name in dict.fromkeys(failed):
        log = log_dir / f"{name}.test.log"
        console.print(f"[red]FAIL[/] {name}: the last lines of {log}:", highlight=False)
        console.print(entrytests.tail(log), markup=False, highlight=False)
    if failed:
        raise Failure(f"tests failed: {', '.join(dict.fromkeys(failed))}")
    if not ran:
        raise Failure("no entry declares tests")


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


@cli.command("verify")
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
@click.pass_context
def verify_cmd(ctx, entries, quick, full, soak):
    """Run the conformance cases against ENTRIES; exit 1 when an `ours` entry fails one."""
    if full or soak:
        failed = verify_full(
            ctx.obj["repo"], [e for e in load_entries(ctx, entries) if e.kind == "ours"], soak, ensure_built
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


@cli.command("instructions")
@click.argument("entries", nargs=-1)
@click.option(
    "--requests",
    type=click.IntRange(16, 1_000_000),
    default=instructions.DEFAULT_REQUESTS,
    show_default=True,
    help="N: the two runs serve N and 10 N requests.",
)
@click.option("--profiles", type=click.Path(file_okay=False, path_type=Path), help="Save the top functions here.")
@click.pass_context
def instructions_cmd(ctx, entries, requests, profiles):
    """Count the instructions per request of the native entries under callgrind (issue 17)."""
    problem = instructions.available()
    if problem:
        raise Failure(f"instructions cannot be counted here: {problem}")
    chosen = [e for e in load_entries(ctx, entries) if e.native or e.name in entries]
    log_dir = ctx.obj["repo"] / "results" / "logs"
    counts: dict[str, dict[str, float]] = {}
    failed = False
    for entry in chosen:
        why = entry.reason or ensure_built(entry, log_dir)
        if why:
            err_console.print(f"[yellow]{entry.name}[/]: {why}")
            failed = True
            continue
        for mode_name in instructions.PER_WRITE:
            with spinner() as p:
                p.add_task(f"callgrind {entry.name} {mode_name}: {requests} and {10 * requests} requests", total=None)
                try:
                    c = instructions.count(entry, mode_name, requests, keep=profiles)
                except (StartError, instructions.CountError) as err:
                    err_console.print(f"[red]{entry.name} {mode_name}[/]: {str(err).splitlines()[0]}")
                    failed = True
                    continue
            counts.setdefault(entry.name, {})[mode_name] = c.per_request
            where = f" (profile {profiles / c.annotation})" if profiles else ""
            console.print(f"{entry.name} {mode_name}: {c.per_request:,.0f} instructions per request{where}")
    for entry in chosen:  # each against the floor of its mechanism (entry.toml `floor`), when counted
        floor, mine = counts.get(entry.floor), counts.get(entry.name)
        if floor and mine and entry.kind != "floor":
            ratios = ", ".join(f"{m} {v / floor[m]:.2f}×" for m, v in mine.items() if floor.get(m))
            console.print(f"{entry.name} of its floor ({entry.floor}): {ratios}")
    if failed:
        raise Failure("some entries could not be counted (above)")


@cli.command("gate")
@click.argument("entries", nargs=-1)
@click.option("--baseline", metavar="REV", help="The revision to compare with (built in a git worktree).")
@click.option("--aa", is_flag=True, help="Compare each entry with itself: the machine's noise floor.")
@click.option("--pairs", type=click.IntRange(2, 100), default=5, show_default=True, help="A B pairs before deciding.")
@click.option(
    "--max-pairs", type=click.IntRange(2, 200), default=15, show_default=True, help="The cap when inconclusive."
)
@click.option(
    "--threshold", type=click.FloatRange(0, 10), default=0.05, show_default=True, help="Regression beyond this."
)
@click.option(
    "--noise", type=click.FloatRange(0, 10), default=0.05, show_default=True, help="The noise floor (fraction)."
)
@click.option("--timed", is_flag=True, help="Time native entries too instead of counting their instructions.")
@click.option("--mode", "mode_name", default="keepalive", show_default=True, help="The load of the timed samples.")
@click.option("--duration", type=click.IntRange(1, 600), default=3, show_default=True, help="Seconds per sample.")
@click.option("--warmup", type=click.IntRange(0, 600), default=1, show_default=True)
@click.option("--connections", type=click.IntRange(1, 10000), default=50, show_default=True)
@click.option("--cpu-quota", type=click.FloatRange(0.05, 1.0), default=0.5, show_default=True)
@click.option(
    "--requests", type=click.IntRange(16, 1_000_000), default=instructions.DEFAULT_REQUESTS, show_default=True
)
@click.pass_context
def gate_cmd(
    ctx,
    entries,
    baseline,
    aa,
    pairs,
    max_pairs,
    threshold,
    noise,
    timed,
    mode_name,
    duration,
    warmup,
    connections,
    cpu_quota,
    requests,
):
    """Compare ENTRY… (default: every available `ours` entry) with --baseline REV, or with itself (--aa).

    Exit 1 on a significant regression beyond --threshold."""
    if bool(baseline) == aa:
        raise click.UsageError("give exactly one of --baseline REV and --aa")
    if mode_name not in MODES:
        raise click.BadParameter(f"unknown mode {mode_name!r} (known: {', '.join(MODES)})", param_hint="'--mode'")
    if max_pairs < pairs:
        raise click.BadParameter(f"must be at least --pairs ({pairs})", param_hint="'--max-pairs'")
    chosen = load_entries(ctx, entries)
    names = [e.name for e in chosen if entries or (e.kind == "ours" and e.available)]
    cfg = gate_config(mode_name, duration, warmup, connections, cpu_quota)
    opts = GateOptions(pairs, max_pairs, threshold, noise, timed, requests)
    against = "itself (A/A)" if aa else baseline
    console.print(f"gate: {', '.join(names)} against {against}; A = {against}, B = the working tree", highlight=False)
    try:
        verdicts = run_gate(
            ctx.obj["repo"],
            names,
            baseline,
            cfg,
            opts,
            ctx.obj["repo"] / "results" / "logs",
            say=lambda line: console.print(line, highlight=False),
        )
    except GateError as err:
        raise Failure(str(err)) from None
    regressed = [name for name, v in verdicts if v.regression(threshold)]
    for name, verdict in verdicts:
        console.print(f"{name}: {verdict.words()}", highlight=False)
    if regressed:
        raise click.exceptions.Exit(1)


@cli.command("report")
@click.argument("run", type=click.Path(exists=True, path_type=Path))
@click.option("--reference", default=None, help="Default: the run's own reference.")
def report_cmd(run, reference):
    """Write report.md and report.html for RUN (a results/<run-id> directory or its run.json)."""
    publish(run if run.is_dir() else run.parent, reference)


@cli.command("new")
@click.argument("name")
@click.option("--language", required=True, help="The language (or the server, for a peer), as the report shows it.")
@click.option("--peer", is_flag=True, help="A peer (what people run instead) in peers/NAME, not ours in servers/NAME.")
@click.pass_context
def new_cmd(ctx, name, language, peer):
    """Write the skeleton of a new entry; `arena check NAME` then says what is missing."""
    repo = ctx.obj["repo"]
    try:
        taken = {e.name for e in discover(repo)}
    except ManifestError:
        taken = set()  # a broken manifest elsewhere does not stop a new entry; folders are still checked
    try:
        newentry.check_name(name, repo, taken)
    except newentry.NewEntryError as err:
        raise click.BadParameter(str(err), param_hint="'NAME'") from None
    if not language.strip():
        raise click.BadParameter("must not be empty", param_hint="'--language'")
    folder = newentry.create(repo, name, language.strip(), peer)
    for path in sorted(folder.iterdir()):
        console.print(f"wrote {path.relative_to(repo)}", highlight=False)
    console.print(f"next: CONTRIBUTING.md, then `arena check {name}` names what is missing", highlight=False)


def find_entry(repo: Path, name: str) -> Entry:
    """The entry NAME: from its own folder's manifest when there is one (a broken manifest
    elsewhere does not hide it), else among every entry. Raises BadParameter or Failure."""
    if not newentry.NAME_RE.match(name):
        raise click.BadParameter(f"{name!r} is not an entry name", param_hint="'NAME'")
    for group in ("servers", "peers"):
        manifest = repo / group / name / "entry.toml"
        if manifest.is_file():
            try:
                found = [e for e in load_manifest(manifest) if e.name == name]
            except ManifestError as err:
                raise Failure(f"{check.FAIL} entry.toml: {err}") from None
            if found:
                return found[0]
    try:
        return select(discover(repo), [name])[0]
    except ManifestError as err:
        raise Failure(str(err)) from None
    except KeyError:
        raise click.BadParameter(f"no entry named {name!r} (arena list shows them)", param_hint="'NAME'") from None


@cli.command("check")
@click.argument("name")
@click.pass_context
def check_cmd(ctx, name):
    """Everything NAME must pass to be ranked, one line each; exit 0 only when it is ready."""
    entry = find_entry(ctx.obj["repo"], name)
    console.print(f"check {entry.name} ({entry.kind}, {entry.folder.relative_to(ctx.obj['repo'])}):", highlight=False)
    items = check.check(
        entry,
        ctx.obj["repo"] / "results" / "logs",
        report=lambda item: console.print(item.line(), markup=False, highlight=False, soft_wrap=True),
    )
    failing = [i.name for i in items if i.mark == check.FAIL]
    if not check.ready(items, entry.kind):
        raise Failure(f"{entry.name} is not ready to be ranked: {', '.join(failing)}")
    extra = f" ({', '.join(failing)} not required of a {entry.kind})" if failing else ""
    what = "measured (the floor is never ranked)" if entry.kind == "floor" else "ranked"
    console.print(f"{entry.name} is ready to be {what}{extra}", highlight=False)


for _command in LOAD_COMMANDS:  # sweep, latency, history (loadcli.py)
    cli.add_command(_command)
cli.add_command(syscalls_cmd)  # syscallcli.py
cli.add_command(row_cmd)  # commands/row.py
cli.add_command(bench_cmd)  # commands/bench.py


@cli.command("compare")
@click.argument("runs", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--reference", default="nginx-lua", show_default=True, help="The second unit beside the floor.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path), help="Also write the comparison here.")
def compare_cmd(runs, reference, markdown):
    """Put RUN directories (or their run.json) side by side, each read against its own floor.

    Exit 1 when a run has no floor: absolute figures are not ranked across machines."""
    if len(runs) < 2:
        raise click.BadParameter("give at least two runs (results/<run-id> or their run.json)", param_hint="'RUNS'")
    try:
        comparison = crossrun.compare(crossrun.read_runs(list(runs)), reference)
    except crossrun.CompareError as err:
        raise Failure(str(err)) from None
    console.print("what differs between the runs:", highlight=False)
    for line in comparison.differences or ["nothing recorded: same machine, tools and configuration"]:
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    from rich.table import Table

    for mode_name in comparison.modes:
        rows = crossrun.table(comparison, mode_name)
        table = Table(title=f"{mode_name}: each run's requests/s, ÷ its own floor, ÷ its own {reference}")
        for i, header in enumerate(rows.headers):
            table.add_column(header, justify="right" if i in rows.numeric else "left")
        for row in rows.rows:
            table.add_row(*row)
        console.print(table)
    for mode_name in comparison.modes:
        for line in comparison.lines[mode_name]:
            console.print(f"{mode_name} {line.entry}: {line.verdict()}", highlight=False)
    apart = [f"{m} {x.entry}" for m in comparison.modes for x in comparison.lines[m] if x.agree is False]
    if apart:
        console.print(f"the runs differ on {', '.join(apart)}", highlight=False)
    else:
        console.print(f"the runs agree: every ratio to the floor within {crossrun.AGREE:.0%}", highlight=False)
    if markdown:
        markdown.write_text(crossrun.markdown(comparison))
        console.print(f"written: {markdown}", highlight=False)


# --- entry point --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Runs the command; bad input: one line on stderr and exit 2; errors: `Error: …`, exit 1."""
    try:
        status = cli.main(args=argv, prog_name="arena", standalone_mode=False)
    except click.UsageError as e:
        print(f"arena: {e.format_message()}", file=sys.stderr)
        return 2
    except Failure as e:
        print(f"Error: {e}", file=sys.stderr)  # plain: never wrapped, greppable
        return 1
    except click.Abort:
        return 130
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    return status if isinstance(status, int) else 0  # click.exceptions.Exit(n) from a command


if __name__ == "__main__":
    sys.exit(main())
