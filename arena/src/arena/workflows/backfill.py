"""`arena history --backfill REV..REV ENTRY…`: the history replayed, as `asv run A..B` does.

For REV (the range's start) and each later commit of the range that changed a named entry's
folder or its floor's (git rev-list --reverse, oldest first), a detached worktree of that
commit (the gate's), the entries and their floor built there, and each native entry's user-space
instructions per request counted under callgrind in keep-alive and pipelined by 16 (counts
are deterministic to a fraction of a percent: one count per commit is a point), the floor's
alike; one history line per commit (history.backfill_line: each count and its ratio to the
floor of the same commit), appended as measured. Timed pairs for entries that are not native
are not replayed (left out, said). A commit whose entry cannot be read or built is said and
skipped, never fatal.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from ..analysis import history
from ..core.modes import tier_of
from ..counts import instructions
from ..entries.manifest import Entry
from .gate import GateError, baseline_entries, ensure_built, worktree


class BackfillError(Exception):
    """The range cannot be replayed (a bad range, no valgrind, an entry that is not native)."""


def commits(repo: Path, span: str, folders: list[str]) -> list[str]:
    """The range's start and every commit after it that touched one of folders, oldest first."""
    start, sep, end = span.partition("..")
    if not sep or not start or not end:
        raise BackfillError(f"{span!r} is not a range REV..REV")

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise BackfillError(f"git {' '.join(args[:2])}: {done.stderr.strip().splitlines()[-1:]}")
        return done.stdout

    try:
        first = git("rev-parse", "--verify", f"{start}^{{commit}}").strip()
    except BackfillError:
        raise BackfillError(f"no commit {start!r} here") from None
    later = git("rev-list", "--reverse", f"{first}..{end}", "--", *folders).split()
    return [first, *later]


def replay(
    repo: Path,
    span: str,
    entries: list[Entry],
    floor: Entry,
    out: Path,
    requests: int = instructions.DEFAULT_REQUESTS,
    say: Callable[[str], None] = print,
) -> int:
    """Replays span for entries (native, beside their floor), appending a line per commit to
    out; returns the lines written. Raises BackfillError before the first commit when it cannot run."""
    if instructions.available():
        raise BackfillError(instructions.available())
    foreign = [e.name for e in entries if not e.native]
    if foreign:
        raise BackfillError(f"not native, so not counted (timed replay is not implemented): {', '.join(foreign)}")
    folders = sorted({str(e.folder.relative_to(repo)) for e in [*entries, floor]})
    chosen = commits(repo, span, folders)
    say(f"backfill: {len(chosen)} commits of {span} touching {', '.join(folders)}")
    names = [e.name for e in entries] + [floor.name]
    written = 0
    for n, commit in enumerate(chosen, 1):
        line = _commit_line(repo, commit, names, floor.name, requests, say)
        if line is None:
            continue
        with out.open("a", encoding="utf-8") as file:
            file.write(history.dumps(line))
        written += 1
        counted = ", ".join(
            f"{name} {mode} {figures['instructions']:,.1f}"
            for name, modes in line["entries"].items()
            for mode, figures in modes.items()
        )
        say(f"  {n}/{len(chosen)} {commit[:12]}: {counted}")
    return written


def _commit_line(repo: Path, commit: str, names: list[str], floor: str, requests: int, say) -> dict | None:
    """The history line of one commit, or None (said) when it cannot be measured."""
    try:
        with worktree(repo, commit) as root:
            there = baseline_entries(root, names)
            if floor not in there:
                say(f"  {commit[:12]}: no {floor} at this commit: skipped")
                return None
            counts: dict[str, dict[str, float]] = {}
            for name in names:
                if name not in there:
                    continue
                ensure_built(there[name], root / "results" / "logs")
                counts[name] = {
                    m: instructions.count(there[name], m, requests).per_request for m in instructions.PER_WRITE
                }
    except (GateError, instructions.CountError) as err:
        say(f"  {commit[:12]}: {str(err).splitlines()[0]}: skipped")
        return None
    date = subprocess.run(
        ["git", "-C", str(repo), "show", "-s", "--format=%cI", commit], capture_output=True, text=True
    ).stdout.strip()
    tiers = {name: tier_of(there[name].kind, there[name].tier) for name in counts}
    return history.backfill_line(commit, date, counts, floor, tiers)
