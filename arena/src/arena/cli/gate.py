"""`arena gate`: the regression gate (workflows/gate.py): ENTRY… of the working tree against
--baseline REV or against itself (--aa), or a server the arena did not build, --cmd against
--baseline-cmd or --url against --baseline-url; its verdicts as files (report/verdicts.py)
and its exit status: 0 no regression, 1 a regression, 2 bad usage, 3 inconclusive, 4 the gate
could not run to its end (its files are still written, saying why)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..analysis import compare
from ..core.modes import MODES, mode
from ..counts import instructions
from ..entries import outside, remote
from ..load.oha import oha_problem
from ..report import verdicts as verdict_files
from ..ui import console
from ..workflows.gate import LATENCY_MODE, LATENCY_PERCENTILES, GateError, gate_config, run_gate, run_outside_gate
from ..workflows.gate import Options as GateOptions
from .common import Failure, load_entries
from .options import connections_option, duration_option

MIN_PAIRS = compare.min_pairs()
CLIENT_ONLY = (
    "only the client's figures: a server at a URL is not started here, so its CPU is unknown and "
    "requests/s decides (wrk's share of the machine moves it more than a server's CPU per request)"
)
RUNNING = (
    "servers the arena did not start: the same process in every sample, its CPU that of --pid's "
    "(--baseline-pid's) process and its descendants"
)
FileOption = click.Path(dir_okay=False, path_type=Path)


@click.command("gate")
@click.argument("entries", nargs=-1)
@click.option("--baseline", metavar="REV", help="The revision to compare with (built in a git worktree).")
@click.option("--aa", is_flag=True, help="Compare each entry with itself: the machine's noise floor.")
@click.option("--cmd", "command", metavar="CMD", help="B: the server this command starts ({listen} or {port}).")
@click.option("--baseline-cmd", metavar="CMD", help="A, with --cmd: the server to compare it with.")
@click.option("--url", metavar="URL", help="B: a running server (client figures only, unless --pid).")
@click.option("--baseline-url", metavar="URL", help="A, with --url: the running server to compare it with.")
@click.option("--pid", type=click.IntRange(1), help="With --url: its process here; its tree's CPU per request decides.")
@click.option("--baseline-pid", type=click.IntRange(1), help="With --baseline-url: its process here (as --pid).")
@click.option("--path", "target", default="/", show_default=True, help="With --cmd: the path requested.")
@click.option(
    "--expect", type=click.IntRange(100, 599), default=302, show_default=True, help="With --cmd or --url: its status."
)
@click.option(
    "--pairs",
    type=click.IntRange(2, 100),
    default=MIN_PAIRS,
    show_default=True,
    help=f"A B pairs before deciding: {MIN_PAIRS}, the fewest with which the exact Wilcoxon signed-rank test "
    f"can reach p < {compare.ALPHA:g} (fewer can only say no change).",
)
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
@click.option(
    "--native",
    is_flag=True,
    help="With --cmd: both commands run native code; count their instructions per request (callgrind), not time.",
)
@click.option(
    "--latency",
    type=click.Choice(LATENCY_PERCENTILES),
    help="Also judge this latency percentile at --at of A's capacity (oha at a fixed rate, open loop).",
)
@click.option(
    "--at",
    type=click.FloatRange(0.01, 1.0),
    default=0.5,
    show_default=True,
    help="With --latency: the fixed rate, as a share of A's keep-alive requests/s.",
)
@click.option("--mode", "mode_name", default="keepalive", show_default=True, help="The load of the timed samples.")
@duration_option("gate", 3, "Seconds per sample.")
@click.option("--warmup", type=click.IntRange(0, 600), default=1, show_default=True)
@connections_option
@click.option("--cpu-quota", type=click.FloatRange(0.05, 1.0), default=0.5, show_default=True)
@click.option(
    "--requests", type=click.IntRange(16, 1_000_000), default=instructions.DEFAULT_REQUESTS, show_default=True
)
@click.option("--json", "json_file", type=FileOption, help="Write the verdicts as JSON (every criterion).")
@click.option("--junit", "junit_file", type=FileOption, help="Write JUnit XML: a test case per entry and criterion.")
@click.option(
    "--summary", "summary_file", type=FileOption, help="Write the Markdown summary [appended to $GITHUB_STEP_SUMMARY]."
)
@click.pass_context
def gate_cmd(
    ctx,
    entries,
    baseline,
    aa,
    command,
    baseline_cmd,
    url,
    baseline_url,
    pid,
    baseline_pid,
    target,
    expect,
    pairs,
    max_pairs,
    threshold,
    noise,
    timed,
    native,
    latency,
    at,
    mode_name,
    duration,
    warmup,
    connections,
    cpu_quota,
    requests,
    json_file,
    junit_file,
    summary_file,
):
    """Did a change make a server slower? ENTRY… (default: every available `ours` entry) of the
    working tree against --baseline REV or itself (--aa); or --cmd against --baseline-cmd; or
    --url against --baseline-url.

    Decided on paired, interleaved samples (Wilcoxon signed-rank at p < 0.01 and a bootstrap
    95% interval beyond --noise; docs/arena/gate.md). Exit 0: no regression; 1: a regression
    beyond --threshold; 2: bad usage; 3: inconclusive at --max-pairs; 4: the gate could not run
    to its end (Error: …; the files say it too)."""
    sides = _sides(baseline, aa, command, baseline_cmd, url, baseline_url)
    if (pid is None) != (baseline_pid is None) or (pid is not None and sides != "url"):
        raise click.BadParameter("give --pid and --baseline-pid together, with --url", param_hint="'--pid'")
    if mode_name not in MODES:
        raise click.BadParameter(f"unknown mode {mode_name!r} (known: {', '.join(MODES)})", param_hint="'--mode'")
    if max_pairs < pairs:
        raise click.BadParameter(f"must be at least --pairs ({pairs})", param_hint="'--max-pairs'")
    if sides != "entries" and entries:
        raise click.BadParameter(f"takes no ENTRY ({entries[0]!r}): it compares two servers", param_hint=f"'--{sides}'")
    if sides == "url" and mode(mode_name).capped:
        raise click.BadParameter("a capped mode needs servers the arena starts", param_hint="'--mode'")
    _check_native(native, sides, timed, target, expect)
    _check_latency(ctx, latency, mode_name)
    cfg = gate_config(mode_name, duration, warmup, connections, cpu_quota)
    opts = GateOptions(pairs, max_pairs, threshold, noise, timed, requests, latency=latency, at=at, native=native)
    say = lambda line: console.print(line, highlight=False, soft_wrap=True, markup=False)  # noqa: E731
    notes, error = [], None
    if sides == "entries":
        a_words, b_words = ("itself (A/A)" if aa else baseline), "the working tree"
    else:
        old, new = _outside_pair(sides, command, baseline_cmd, (url, pid), (baseline_url, baseline_pid), target, expect)
        a_words, b_words = (baseline_cmd, command) if sides == "cmd" else (baseline_url, url)
        notes = [CLIENT_ONLY if pid is None else RUNNING] if sides == "url" else []
    try:
        if sides == "entries":
            chosen = load_entries(ctx, entries)
            names = [e.name for e in chosen if entries or (e.kind == "ours" and e.available)]
            say(f"gate: {', '.join(names)} against {a_words}; A = {a_words}, B = {b_words}")
            found = run_gate(ctx.obj["repo"], names, baseline, cfg, opts, ctx.obj["repo"] / "results" / "logs", say)
        else:
            say(f"gate: B = {b_words} against A = {a_words}")
            found = run_outside_gate(new, old, cfg, opts, say)
    except (GateError, Failure) as err:  # Failure: an entry.toml that cannot be read
        error, found = str(err), getattr(err, "found", [])
    result = verdict_files.GateVerdicts(a_words, b_words, threshold, noise, compare.ALPHA, found, notes, error)
    for name, verdict in found:
        say(f"{name}: {verdict.words()}")
    for note in notes:
        say(f"note: {note}")
    if error is not None:
        click.echo(f"Error: {error}", err=True)  # plain, as main() prints a Failure: greppable
    say(f"gate: {result.status}")
    _write_files(result, json_file, junit_file, summary_file)
    if result.exit_status:
        raise click.exceptions.Exit(result.exit_status)


def _check_latency(ctx, latency, mode_name) -> None:
    """--latency's and --at's usage errors. oha missing is one too, found before anything runs:
    a CI that asked for the latency criterion must not pass without it, nor wait to be told."""
    if latency is None:
        if ctx.get_parameter_source("at") == click.core.ParameterSource.COMMANDLINE:
            raise click.BadParameter("only with --latency", param_hint="'--at'")
        return
    if mode_name != LATENCY_MODE:
        raise click.BadParameter(
            f"its capacity is A's {LATENCY_MODE} requests/s: give --mode {LATENCY_MODE}", param_hint="'--latency'"
        )
    problem = oha_problem()
    if problem:
        raise click.BadParameter(problem, param_hint="'--latency'")


def _check_native(native, sides, timed, target, expect) -> None:
    """--native's usage errors: it needs two commands, counted (not --timed), that the count's
    client can load (it sends `GET /` and reads 302s: counts/instructions.py), and valgrind."""
    if not native:
        return
    if sides != "cmd":
        why = "a running server is not started here" if sides == "url" else "an entry's entry.toml says native"
        raise click.BadParameter(f"only with --cmd and --baseline-cmd ({why})", param_hint="'--native'")
    if timed:
        raise click.BadParameter(
            "counts instead of timing: give --timed or --native, not both", param_hint="'--native'"
        )
    if target != "/" or expect != 302:
        raise click.BadParameter(
            "the count's client sends GET / and expects a 302: give neither --path nor --expect",
            param_hint="'--native'",
        )
    if instructions.available():
        raise click.BadParameter(instructions.available(), param_hint="'--native'")


def _sides(baseline, aa, command, baseline_cmd, url, baseline_url) -> str:
    """Which comparison the flags ask for: "entries", "cmd" or "url"; a usage error otherwise."""
    if command is not None or baseline_cmd is not None:
        if command is None or baseline_cmd is None:
            flag = "--cmd" if command is None else "--baseline-cmd"
            raise click.BadParameter("is needed with the other one (B and A)", param_hint=f"'{flag}'")
    if url is not None or baseline_url is not None:
        if url is None or baseline_url is None:
            flag = "--url" if url is None else "--baseline-url"
            raise click.BadParameter("is needed with the other one (B and A)", param_hint=f"'{flag}'")
    given = [bool(baseline), aa, command is not None, url is not None]
    if sum(given) != 1:
        raise click.UsageError(
            "give exactly one of --baseline REV, --aa, --cmd with --baseline-cmd, --url with --baseline-url"
        )
    return "entries" if given[0] or given[1] else "cmd" if given[2] else "url"


def _outside_pair(sides, command, baseline_cmd, url, baseline_url, target, expect):
    """(A, B) as ad-hoc entries (outside.py, remote.py); a usage error naming the flag."""
    if sides == "cmd":
        made = []
        for flag, line in (("--baseline-cmd", baseline_cmd), ("--cmd", command)):
            try:
                made.append(outside.outside_entry(line, target, expect))
            except outside.OutsideError as err:
                hint = "'--path'" if "--path" in str(err) else f"'{flag}'"
                raise click.BadParameter(str(err), param_hint=hint) from None
        return made[0], made[1]
    made = []
    for flag, (address, process) in (("--baseline-url", baseline_url), ("--url", url)):
        try:
            made.append(remote.remote_entry(address, process, expect))
        except remote.RemoteError as err:
            hint = flag.replace("url", "pid") if "process" in str(err) else flag
            raise click.BadParameter(str(err), param_hint=f"'{hint}'") from None
    return made[0], made[1]


def _write_files(result, json_file, junit_file, summary_file) -> None:
    """The verdict files asked for, and the Markdown summary: to --summary, else appended to
    $GITHUB_STEP_SUMMARY when a CI sets it."""
    for path, text in ((json_file, verdict_files.to_json), (junit_file, verdict_files.to_junit)):
        if path is not None:
            path.write_text(text(result), encoding="utf-8")
    markdown = verdict_files.to_markdown(result)
    if summary_file is not None:
        summary_file.write_text(markdown, encoding="utf-8")
    elif os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as out:
            out.write(markdown + "\n")
