"""The history of benches, and the changes in it (docs/arena/gate.md, "The regression gate").

Each `arena bench` appends one line to results/history.jsonl: when, the commit it measured
(and whether the tree had uncommitted changes), and per entry the median requests/s and CPU
µs per request of each mode, and the instruction counts of native entries. `arena history`
reads the series of one figure per (entry, mode) and finds where its level changed with
E-Divisive means (MongoDB's signal-processing-algorithms, the detector their CI performance
tracking uses): a permutation test on energy statistics, so no threshold is tuned by hand.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..core import results
from ..core.model import Run
from .stats import group_samples, median

FILE = "history.jsonl"
METRICS = {  # name -> (words, higher is better)
    "rps": ("requests/s", True),
    "cpu_us_per_req": ("CPU µs per request", False),
    "instructions": ("instructions per request", False),
}
PVALUE = 0.01  # of E-Divisive's permutation test
PERMUTATIONS = 1000


def commit_of(repo: Path) -> tuple[str | None, bool]:
    """(the checked-out commit, whether the tree has uncommitted changes); None outside git."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        status = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None, False
    if head.returncode != 0:
        return None, False
    return head.stdout.strip(), bool(status.stdout.strip())


def summary(run: Run, commit: str | None, dirty: bool) -> dict:
    """The history line of one run."""
    figures: dict[str, dict] = {}
    for (entry, mode_name), series in group_samples(run.samples).items():
        mine = figures.setdefault(entry, {})
        mine[mode_name] = {m: median(series[m]) for m in ("rps", "cpu_us_per_req") if series[m]}
    for e in run.entries:
        for c in e.instructions:
            figures.setdefault(e.name, {}).setdefault(c.mode, {})["instructions"] = c.per_request
    return {
        "run_id": run.run_id,
        "finished": run.finished,
        "commit": commit,
        "dirty": dirty,
        "quick": run.config.quick,
        "entries": figures,
    }


def append(run: Run, repo: Path, results_dir: Path) -> Path:
    """Appends run's summary line to results_dir/history.jsonl; returns the file."""
    path = results_dir / FILE
    commit, dirty = commit_of(repo)
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(summary(run, commit, dirty), sort_keys=True) + "\n")
    return path


def read(path: Path) -> list[dict]:
    """Every line of a history file, oldest first; a line that is not JSON is skipped."""
    return results.read_lines(path)


@dataclass
class Change:
    entry: str
    mode: str
    metric: str
    index: int  # the first line of the new level
    run_id: str
    commit: str | None
    before: float  # median of the level before
    after: float  # and after

    def words(self) -> str:
        what, higher_is_better = METRICS[self.metric]
        ratio = self.after / self.before if self.before else float("inf")
        better = (ratio > 1) == higher_is_better
        commit = (self.commit or "no commit")[:12]
        return (
            f"{self.entry} {self.mode} {what}: {self.before:,.4g} → {self.after:,.4g} ({ratio - 1:+.1%}, "
            f"{'better' if better else 'worse'}) from run {self.run_id}, commit {commit}"
        )


def series(lines: list[dict], entry: str, mode: str, metric: str) -> list[tuple[int, float]]:
    """(line index, value) of one figure over the history."""
    out = []
    for i, line in enumerate(lines):
        value = line.get("entries", {}).get(entry, {}).get(mode, {}).get(metric)
        if value is not None:
            out.append((i, float(value)))
    return out


def change_points(values: list[float], seed: int = 0) -> list[int]:
    """Indices into values where a new level starts (E-Divisive means, PVALUE). The library
    draws its permutations from numpy's global generator: seeded here (and restored after)
    so that the same history always gives the same answer."""
    import numpy as np
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    if len(values) < 4:
        return []
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        return sorted(e_divisive(values, pvalue=PVALUE, permutations=PERMUTATIONS))
    finally:
        np.random.set_state(state)


def changes(lines: list[dict], entries: list[str] | None = None, include_quick: bool = False) -> list[Change]:
    """Every change of level in every figure of the history (quick runs left out)."""
    kept = [line for line in lines if include_quick or not line.get("quick")]
    keys = sorted(
        {
            (entry, mode, metric)
            for line in kept
            for entry, modes in line.get("entries", {}).items()
            for mode, figures in modes.items()
            for metric in figures
            if metric in METRICS and (not entries or entry in entries)
        }
    )
    out = []
    for entry, mode, metric in keys:
        points = series(kept, entry, mode, metric)
        values = [v for _, v in points]
        cuts = change_points(values)
        bounds = [0, *cuts, len(values)]
        for n, cut in enumerate(cuts):
            before = values[bounds[n] : cut]
            after = values[cut : bounds[n + 2]]
            line = kept[points[cut][0]]
            out.append(
                Change(entry, mode, metric, cut, line["run_id"], line.get("commit"), median(before), median(after))
            )
    return out
