"""The warnings grouped by kind, for the reports: one line per kind instead of one sentence per
entry and mode. A kind is a warning's sentence with its entry names, mode names and figures
taken out (caveats.py words each kind by one template), so "rust in mode close had 3 socket
errors" and "go in mode keepalive had 12 socket errors" are one kind that applies to
rust · close and go · keepalive. Each group keeps its sentences, which the HTML folds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .view import View

FIGURE = re.compile(r"\d[\d,. ]*")


@dataclass
class WarningGroup:
    example: str  # the first sentence of this kind, as caveats.py wrote it
    entries: list[str] = field(default_factory=list)  # the entries it names, in order of appearance
    modes: list[str] = field(default_factory=list)  # the modes it names, in order of appearance
    sentences: list[str] = field(default_factory=list)  # every sentence of this kind

    def applies_to(self) -> str:
        """ "rust, go; modes close, keepalive", or "" when the sentences name neither."""
        said = [", ".join(self.entries)] if self.entries else []
        said += [("mode " if len(self.modes) == 1 else "modes ") + ", ".join(self.modes)] if self.modes else []
        return "; ".join(said)


def _names(names: list[str], after: str) -> re.Pattern | None:
    """Whole names (a name may hold '-': nginx-lua is not nginx), longest first, after `after`
    (a lookbehind: entry names not after an article, "its floor" being words; modes after "mode ")."""
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    return re.compile(rf"{after}(?<![\w-])({alternatives})(?![\w-])")


NOT_AFTER_AN_ARTICLE = "(?<!its )(?<!the )(?<!each )(?<!a )"
AFTER_MODE = "(?<=mode )"


def grouped(view: View) -> list[WarningGroup]:
    """view.warnings by kind, in the order each kind first appears."""
    entries = _names([e.name for e in view.run.entries], NOT_AFTER_AN_ARTICLE)
    modes = _names([mv.mode.name for mv in view.modes] + list(view.run.config.modes), AFTER_MODE)
    groups: dict[str, WarningGroup] = {}
    for sentence in view.warnings:
        named_entries = entries.findall(sentence) if entries else []
        named_modes = modes.findall(sentence) if modes else []
        kind = entries.sub("{entry}", sentence) if entries else sentence
        kind = modes.sub("{mode}", kind) if modes else kind
        kind = FIGURE.sub("#", kind)
        group = groups.setdefault(kind, WarningGroup(example=sentence))
        group.sentences.append(sentence)
        group.entries += [n for n in named_entries if n not in group.entries]
        group.modes += [m for m in named_modes if m not in group.modes]
    return list(groups.values())
