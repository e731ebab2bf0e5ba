"""A bench's measuring: the plan's samples in their interleaved order, then the extra rounds of
pairs for the ratios still wide; each sample recorded as soon as it is known (Recorder)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..analysis.pairing import RANKED_MODES, next_rep, next_round, wide_pairs
from ..bench import plan
from ..bench.measure import Plan, SampleError, measure_sample
from ..core import distribution, results
from ..core.model import JOURNAL, Config, Failure, Pair, journal_line
from ..core.modes import mode
from ..core.sample import Sample
from ..entries.manifest import Entry
from ..host import conntrack
from ..load.interleave import Step, run_interleaved
from ..load.warmup import warmup_s
from ..ui import bar, console


def _sample_log(log_dir: Path, name: str, mode_name: str, rep: int, err: SampleError) -> str:
    """Writes the failed sample's reason and the server's stderr tail; returns the file's name."""
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / f"{name}-{mode_name}-rep{rep + 1}.log"
    path.write_text(f"{name} {mode_name} rep {rep + 1}: {err.reason}\n\n{err.tail or '(no output)'}\n")
    return path.name


@dataclass
class Recorder:
    """Where each sample goes as soon as it is known (the sample and failure callbacks of
    load/interleave.run_interleaved): samples (or failures), samples.jsonl and its
    distributions, and a failed sample's log under logs/; say prints above the progress bar."""

    cfg: Config
    scripts: dict[str, Path]
    run_dir: Path
    log_dir: Path
    samples: list[Sample]
    failures: list[Failure]
    say: Callable[..., None] = console.print
    sampled: int = 0  # samples measured or failed
    measuring_s: float = 0.0  # wall seconds in measure_sample, failed ones included
    waited_s: float = 0.0  # wall seconds waiting for room in the conntrack table

    @property
    def repeats(self) -> int:
        """Load runs repeated for steal so far (plan.may_repeat bounds them)."""
        return sum(1 for s in self.samples if s.steal_retry is not None)

    def sample(self, step: Step[Entry]) -> None:
        """Waits for room in the conntrack table, measures, records; raises SampleError."""
        e, mode_name = step.subject, step.mode
        began = time.monotonic()
        conntrack.wait_for_room(  # room for the warm-up, the load run and a steal repeat of it
            lambda line: self.say(f"[yellow]{line}[/]", highlight=False),
            conntrack.needed(mode(mode_name).connects_per_request, warmup_s(e, self.cfg) + 2 * self.cfg.duration_s),
        )
        measuring = time.monotonic()
        self.waited_s += measuring - began
        self.sampled += 1
        try:
            item = measure_sample(
                e, mode_name, step.rep, self.cfg, self.scripts, lambda: plan.may_repeat(self.repeats, self.sampled)
            )
        finally:
            self.measuring_s += time.monotonic() - measuring
        self.samples.append(item)
        if item.distribution is not None:
            results.append_line(self.run_dir / distribution.FILE, item.distribution.to_json())
        results.append_line(self.run_dir / JOURNAL, journal_line(item))

    def failed(self, step: Step[Entry], err: SampleError) -> None:
        name, rep = step.subject.name, step.rep
        log = _sample_log(self.log_dir, name, step.mode, rep, err)
        item = Failure(name, step.mode, rep, err.reason, f"logs/{log}")
        self.failures.append(item)
        self.say(f"[red]{name} {step.mode} rep {rep + 1}[/]: {err.reason}", highlight=False)
        results.append_line(self.run_dir / JOURNAL, journal_line(item))

    def run(self, steps: list[Step[Entry]], progress=None) -> int:
        """Measures steps in order (a failed one is recorded and the next goes on); how many succeeded."""
        before = len(self.samples)
        run_interleaved(steps, self.sample, self.failed, (SampleError,), progress=progress)
        return len(self.samples) - before


def measure_plan(steps: Plan, record: Recorder) -> None:
    """Every sample of the plan, each recorded as soon as it is known; a failed sample is said
    and the next one goes on."""
    cfg = steps.cfg
    cap = f", capped modes at {cfg.cpu_quota:.0%} of it" if cfg.cpu_quota else ""
    console.print(
        f"measuring {len(steps.entries)} entries × {len(cfg.modes)} modes × {cfg.repetitions} repetitions, "
        f"{cfg.warmup_s} s warm-up (or the entry's own) + {cfg.duration_s} s each: "
        f"about {plan.minutes(steps.seconds())}; "
        f"server on CPU {cfg.server_cpus}{cap}, wrk on CPU {cfg.client_cpus}"
    )
    with bar() as p:
        task = p.add_task("bench", total=len(steps.steps))
        began = time.monotonic()

        def progress(done: int, _total: int, step: Step[Entry]) -> None:
            spent = (time.monotonic() - began) / steps.seconds(0, done) if done else 1
            left = plan.minutes(steps.seconds(done) * spent)
            described = f"rep {step.rep + 1}/{cfg.repetitions} {step.mode:<16} {step.subject.name:<14} {left} left"
            p.update(task, completed=done, description=described)

        record.say = p.console.print
        record.run(steps.steps, progress)
        p.update(task, completed=len(steps.steps))


def grow_pairs(steps: Plan, record: Recorder, pairs: list[Pair], current, budget_s: float) -> None:
    """Extra rounds (pyperf's idea: measure until the figure is steady, and say when it was not):
    each round gives one pair (the entry, then its partner straight after, recorded as a Pair)
    to each ratio of the group that pairing.next_round puts first: the ranking modes' ratios
    (keep-alive capped, then close capped) that can still reach ±3%, before any other; at most
    plan.MAX_PAIRS pairs a ratio and budget_s seconds in all (plan.pairs_budget_s), a pair's cost
    reckoned as the plan reckons a sample's. What is still wide at the end, the console and
    report say."""
    live, cfg = steps.entries, steps.cfg
    began = time.monotonic()

    def cost(e: Entry, other: Entry) -> float:
        return plan.sample_s(e, cfg) + plan.sample_s(other, cfg)

    with bar() as p:
        task = p.add_task("extra pairs", total=None)
        record.say = p.console.print
        # each round adds a pair to every ratio of one group: at most MAX_PAIRS rounds a group
        for round_no in range(plan.MAX_PAIRS * 2 * (len(RANKED_MODES) + 1)):
            chosen = next_round(wide_pairs(current(), live, plan.MAX_PAIRS), plan.MAX_PAIRS, cost)
            measured = 0
            for _, mode_name, e, other, _ratio in chosen:
                if time.monotonic() - began + cost(e, other) > budget_s:
                    continue
                p.update(task, description=f"extra round {round_no + 1}: {mode_name} {e.name} and {other.name}")
                taken = {(x.entry, x.mode, x.rep) for x in [*record.samples, *record.failures]}
                reps = [next_rep(taken, x.name, mode_name, cfg.repetitions) for x in (e, other)]
                if record.run([Step(rep, mode_name, x) for x, rep in zip((e, other), reps, strict=True)]) == 2:
                    pairs.append(Pair(mode_name, e.name, reps[0], other.name, reps[1]))
                    measured += 1
            if not measured:  # none wide, the budget spent, or every extra sample failed
                break
    left = wide_pairs(current(), live, most=10**9)
    by_mode = ", ".join(f"{m} {sum(1 for x in left if x[1] == m)}" for m in cfg.modes)
    console.print(
        f"extra pairs: {len(pairs)} in {plan.minutes(time.monotonic() - began)}; "
        f"{len(left)} ratios still wider than ±3% ({by_mode}; the bound of {plan.MAX_PAIRS} pairs or "
        f"the plan's {plan.minutes(budget_s)} left reached)",
        highlight=False,
    )
