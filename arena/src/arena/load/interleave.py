"""The interleaved runner of `arena stack` and `arena bench` (its rounds and its extra pairs): every
subject (an entry, a stack) measured in every mode `repetitions` times, in the order for
rep, for mode, for subject (A B C A B C …), so that the machine's drift from minute to
minute falls on all subjects alike rather than on one. A sample that fails is handed to the
caller and the run goes on; a subject whose failure says it cannot start is tried no more."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, NamedTuple, TypeVar

Subject = TypeVar("Subject")


class Step(NamedTuple, Generic[Subject]):
    rep: int  # from 0
    mode: str
    subject: Subject


def order(subjects: Sequence[Subject], modes: Sequence[str], repetitions: int) -> list[Step[Subject]]:
    """The interleaved order of samples: for rep, for mode, for subject."""
    return [Step(rep, m, s) for rep in range(repetitions) for m in modes for s in subjects]


def run_interleaved(
    steps: list[Step[Subject]],
    sample: Callable[[Step[Subject]], None],
    failed: Callable[[Step[Subject], Exception], None],
    errors: tuple[type[Exception], ...],
    gives_up: tuple[type[Exception], ...] = (),
    name: Callable[[Subject], str] = lambda s: s.name,
    skipped: set[str] = frozenset(),
    progress: Callable[[int, int, Step[Subject]], None] | None = None,
) -> None:
    """Runs sample(step) for every step in order. A step whose sample raises one of errors is
    handed to failed(step, error); one of gives_up (a subset: the subject cannot start) also
    skips the subject's later steps, as skipped names it from the first (by name(subject)).
    progress(done, total, step) before each sample. Other exceptions (Ctrl-C) end the run."""
    dead = set(skipped)
    for i, step in enumerate(steps):
        if name(step.subject) in dead:
            continue
        if progress:
            progress(i, len(steps), step)
        try:
            sample(step)
        except errors as err:
            failed(step, err)
            if isinstance(err, gives_up):
                dead.add(name(step.subject))
