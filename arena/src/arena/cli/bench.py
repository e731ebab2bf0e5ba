"""`arena bench ENTRY…`: every entry under each load mode (benchrun.py), written to
results/<run-id>/ and published (report.md, report.html, the ranked tables on the console)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import click

from ..analysis import history
from ..bench import plan
from ..core.model import Config
from ..core.modes import DEFAULT_MODES, MODES
from ..entries import outside, remote
from ..load.mix import DEFAULT_MIX, MIXES, OPTION_HELP
from ..workflows.bench import Version, run_bench
from .common import Failure, check_cpus, load_entries, publish
from .options import connections_option, duration_option, parse_modes


@click.command("bench")
@click.argument("entries", nargs=-1)
@click.option("--quick", is_flag=True, help="Short runs for smoke tests: 1 s, 1 repetition, no warm-up.")
@duration_option("bench", None, "Seconds per repetition [3; quick 1].")
@click.option("--warmup", type=click.IntRange(0, 600), default=None, help="Seconds of warm-up [1; quick 0].")
@click.option("--reps", type=click.IntRange(1, 100), default=None, help="Repetitions [3; quick 1].")
@click.option("--server-cpus", default="0", show_default=True, help="CPUs the server is pinned to.")
@click.option("--client-cpus", default="1", show_default=True, help="CPUs wrk is pinned to.")
@connections_option
@click.option("--modes", default=",".join(DEFAULT_MODES), show_default=True, help="Comma-separated subset.")
@click.option(
    "--cpu-quota",
    type=click.FloatRange(0.05, 1.0),
    default=0.5,
    show_default=True,
    help="Share of its core the server gets in the capped modes (a cgroup cpu cap).",
)
@click.option("--reference", default="nginx-lua", show_default=True, help="The entry ratios are taken to.")
@click.option("--no-verify", is_flag=True, help="Skip the conformance runner (run.json records verify: null).")
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where run directories go [<repo>/results].",
)
@click.option(
    "--cmd",
    "command",
    default=None,
    help="Also measure the server this command starts (with {listen} or {port}), beside ENTRIES [floor nginx-lua].",
)
@click.option("--path", "target", default="/", show_default=True, help="With --cmd: the path requested.")
@click.option(
    "--expect",
    type=click.IntRange(100, 599),
    default=302,
    show_default=True,
    help="With --cmd or --url: the status it answers.",
)
@click.option(
    "--mix",
    "mix_name",
    type=click.Choice(list(MIXES)),
    default=DEFAULT_MIX,
    show_default=True,
    help=OPTION_HELP,
)
@click.option(
    "--url",
    default=None,
    help="Measure the server running at this URL (not started by the arena), beside ENTRIES if named [none].",
)
@click.option(
    "--pid",
    type=click.IntRange(1),
    default=None,
    help="With --url: its process on this host, whose tree's CPU and memory are then measured.",
)
@click.option(
    "--commit",
    "service_commit",
    metavar="REV",
    default=None,
    help="With --cmd or --url: the version of the server measured (a commit, as given), which its history "
    "line carries; without it (or --commit-of) a --cmd server is left out of results/history.jsonl and a "
    "--url run is not appended.",
)
@click.option(
    "--commit-of",
    "service_repo",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="With --cmd or --url: the git checkout the server was built from; its HEAD is the version (as --commit).",
)
@click.option(
    "--plan",
    "plan_only",
    is_flag=True,
    help="Print the plan (entries, modes, samples, the estimated duration) and exit: nothing is built or measured.",
)
@click.pass_context
def bench_cmd(
    ctx,
    entries,
    quick,
    duration,
    warmup,
    reps,
    server_cpus,
    client_cpus,
    connections,
    modes,
    cpu_quota,
    reference,
    no_verify,
    results_dir,
    command,
    target,
    expect,
    mix_name,
    url,
    pid,
    service_commit,
    service_repo,
    plan_only,
):
    """Benchmark ENTRIES (default: all available) and write results/<run-id>/."""
    chosen_modes = parse_modes(modes, MODES)
    cfg = Config(
        server_cpus=check_cpus("--server-cpus", server_cpus),
        client_cpus=check_cpus("--client-cpus", client_cpus),
        duration_s=duration or (plan.QUICK_DURATION_S if quick else plan.DURATION_S),
        warmup_s=warmup if warmup is not None else (plan.QUICK_WARMUP_S if quick else plan.WARMUP_S),
        repetitions=reps or (plan.QUICK_REPETITIONS if quick else plan.REPETITIONS),
        modes=chosen_modes,
        connections=connections,
        reference=reference,
        quick=quick,
        cpu_quota=cpu_quota,
        startup_runs=1 if quick else 3,
        mix=mix_name,
    )
    for tool in () if plan_only else ("wrk", "taskset"):  # a plan needs neither
        if not shutil.which(tool):
            raise Failure(f"{tool} is not on PATH")
    if pid is not None and url is None:
        raise click.BadParameter("is only for a server measured by --url", param_hint="'--pid'")
    version = _version(service_commit, service_repo, command, url)
    if url is not None:  # a running server, alone unless ENTRIES are named
        if command is not None:
            raise click.BadParameter("give either --url or --cmd, not both", param_hint="'--url'")
        try:
            running = remote.remote_entry(url, pid, expect)
        except remote.RemoteError as err:
            hint = "'--pid'" if "process" in str(err) else "'--url'"
            raise click.BadParameter(str(err), param_hint=hint) from None
        chosen = [*(load_entries(ctx, entries) if entries else []), running]
    elif command is None:
        chosen = load_entries(ctx, entries)
    else:  # an outside server, measured beside the floor and the reference unless ENTRIES are named
        if not target.startswith("/"):
            raise click.BadParameter(f"must start with / (got {target!r})", param_hint="'--path'")
        try:
            outsider = outside.outside_entry(command, target, expect)
        except outside.OutsideError as err:
            raise click.BadParameter(str(err), param_hint="'--cmd'") from None
        every = load_entries(ctx, entries)
        chosen = every if entries else [e for e in every if e.name in ("floor", reference) and e.available]
        chosen.append(outsider)
    if plan_only:  # the estimate arena bench prints before it starts, unavailable entries left out
        usable = [e for e in chosen if e.available]
        click.echo(plan.words(usable, cfg, plan.estimate(usable, cfg, not no_verify)))
        return
    outcome = run_bench(
        ctx.obj["repo"],
        chosen,
        cfg,
        verify=not no_verify,
        results_dir=results_dir or ctx.obj["repo"] / "results",
        version=version,
    )
    view = publish(outcome.run_dir, reference)
    if outcome.interrupted:
        raise KeyboardInterrupt  # main(): "interrupted", exit 130, after everything is written
    failed = sorted({(f.entry, f.mode) for f in view.run.failures})
    if failed or outcome.dropped:
        what = (
            [f"{len(view.run.failures)} failed samples ({', '.join(f'{e} {m}' for e, m in failed)})"] if failed else []
        )
        what += [f"dropped {', '.join(outcome.dropped)} (see above)"] if outcome.dropped else []
        raise Failure(f"the run did not measure everything: {'; '.join(what)}")


REV_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z._/+-]{0,99}")  # a hash, a tag or a describe: one word


def _version(commit: str | None, checkout: Path | None, command: str | None, url: str | None) -> Version | None:
    """The version of the --cmd or --url server (--commit as given, or --commit-of's HEAD and
    whether it has uncommitted changes), None when not given; raises BadParameter."""
    flag = "'--commit'" if commit is not None else "'--commit-of'"
    if commit is None and checkout is None:
        return None
    if commit is not None and checkout is not None:
        raise click.BadParameter("give either --commit or --commit-of, not both", param_hint="'--commit'")
    if command is None and url is None:
        raise click.BadParameter("is only for a server measured by --cmd or --url", param_hint=flag)
    if commit is not None:
        if not REV_RE.fullmatch(commit):
            raise click.BadParameter(f"must be one word naming a version (got {commit!r})", param_hint=flag)
        return Version(commit, False)
    head, dirty = history.commit_of(checkout)
    if head is None:
        raise click.BadParameter(f"{checkout} is not a git checkout with a commit", param_hint=flag)
    return Version(head, dirty)
