"""The interleaved runner (load/interleave.py): for rep, for mode, for subject; a failed sample
is handed back and the run goes on; a subject that cannot start is tried no more."""

from types import SimpleNamespace

import pytest

from arena.load.interleave import Step, order, run_interleaved


class CannotStart(Exception):
    pass


class WrongAnswer(Exception):
    pass


A, B, C = (SimpleNamespace(name=n) for n in "ABC")


def test_the_order_is_rep_then_mode_then_subject():
    assert [(s.rep, s.mode, s.subject.name) for s in order([A, B], ["k", "p"], 2)] == [
        (0, "k", "A"), (0, "k", "B"), (0, "p", "A"), (0, "p", "B"),
        (1, "k", "A"), (1, "k", "B"), (1, "p", "A"), (1, "p", "B"),
    ]  # fmt: skip


def test_a_subject_that_cannot_start_is_dropped_and_a_wrong_answer_only_costs_its_sample():
    measured, failures, said = [], [], []

    def sample(step: Step) -> None:
        if step.subject is A and step.mode == "p":
            raise CannotStart("A exited")
        if step.subject is B and step.rep == 0:
            raise WrongAnswer("B answered 404")
        measured.append((step.rep, step.mode, step.subject.name))

    run_interleaved(
        order([A, B, C], ["k", "p"], 2),
        sample,
        lambda step, err: failures.append((step.rep, step.mode, step.subject.name, str(err))),
        (CannotStart, WrongAnswer),
        gives_up=(CannotStart,),
        skipped={"C"},
        progress=lambda done, total, step: said.append((done, total)),
    )
    assert measured == [(0, "k", "A"), (1, "k", "B"), (1, "p", "B")]
    assert failures == [
        (0, "k", "B", "B answered 404"), (0, "p", "A", "A exited"), (0, "p", "B", "B answered 404"),
    ]  # fmt: skip
    assert said[0] == (0, 12) and len(said) == 6


def test_an_error_not_named_ends_the_run():
    def sample(step: Step) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_interleaved(order([A], ["k"], 1), sample, lambda s, e: None, (WrongAnswer,))
