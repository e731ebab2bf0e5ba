"""report/warnings.py on the golden run: its warning sentences grouped by kind, none lost."""

from __future__ import annotations

from pathlib import Path

from archives import unpack as unpack_tar

from arena.core.model import Run
from arena.report import build
from arena.report.warnings import grouped

GOLDEN = Path(__file__).parent / "fixtures" / "golden" / "recorded-run.tar.xz"


def golden_view(tmp_path: Path):
    return build(Run.read(unpack_tar(GOLDEN, tmp_path)))


def test_every_sentence_is_kept_in_exactly_one_group_of_its_kind(tmp_path):
    view = golden_view(tmp_path)
    groups = grouped(view)
    assert sorted(s for g in groups for s in g.sentences) == sorted(view.warnings)
    assert len(groups) < len(view.warnings) // 5


def test_a_kind_names_every_entry_and_mode_it_applies_to(tmp_path):
    (errors,) = [g for g in grouped(golden_view(tmp_path)) if "socket error" in g.example]
    assert errors.entries == ["java-seed"] and errors.modes == ["close", "close-capped"]
    assert errors.applies_to() == "java-seed; modes close, close-capped"
