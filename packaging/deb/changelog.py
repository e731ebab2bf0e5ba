"""Writes the Debian changelog (gzipped by deb/build as changelog.gz) from CHANGELOG.md: one
entry per dated section "## [X.Y.Z] - YYYY-MM-DD", newest first, each bullet of the section an
item; the version being built comes first, with the [Unreleased] section's bullets when it is a
snapshot, with X.Y.Z's own section when it is a pre-release of X.Y.Z (not tagged yet).

Usage: python3 changelog.py CHANGELOG.md VERSION MAINTAINER EPOCH   (the changelog on stdout)
  VERSION  the package's (packaging/version); EPOCH  SOURCE_DATE_EPOCH, the top entry's time
"""

import email.utils
import re
import sys
import textwrap
from datetime import UTC, datetime

SECTION = re.compile(r"^## \[(?P<name>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?$", re.M)


def sections(markdown: str) -> list[tuple[str, str | None, list[str]]]:
    """(name, date or None, bullets) of every "## [...]" section, in the file's order."""
    found = list(SECTION.finditer(markdown))
    result = []
    for match, following in zip(found, [*found[1:], None], strict=True):
        body = markdown[match.end() : following.start() if following else len(markdown)]
        result.append((match["name"], match["date"], bullets(body)))
    return result


def bullets(body: str) -> list[str]:
    """Each "- " item of a section, its lines joined, without Markdown's emphasis."""
    items = re.findall(r"^- (.*(?:\n  .*)*)", body, re.M)
    return [re.sub(r"\*\*(.*?)\*\*", r"\1", " ".join(line.strip() for line in item.splitlines())) for item in items]


def entry(version: str, items: list[str], maintainer: str, when: datetime) -> str:
    lines = [f"renard ({version}) stable; urgency=medium", ""]
    for item in items or ["No change listed in CHANGELOG.md."]:
        lines += textwrap.wrap(item, width=78, initial_indent="  * ", subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join([*lines, "", f" -- {maintainer}  {email.utils.format_datetime(when)}", ""])


def main(path: str, version: str, maintainer: str, epoch: str) -> str:
    built = datetime.fromtimestamp(int(epoch), UTC)
    release = re.match(r"\d+\.\d+\.\d+", version).group(0)
    entries = []
    found = sections(open(path, encoding="utf-8").read())
    # A snapshot: what is not released yet; before X.Y.Z ("~"), X.Y.Z's own section too.
    folded = release if "~" in version else None
    if version != release:
        items = [item for name, _, items in found if name in ("Unreleased", folded) for item in items]
        entries.append(entry(version, items, maintainer, built))
    for name, date, items in found:
        if date is None or name == folded:
            continue
        when = built if name == version else datetime.fromisoformat(date).replace(hour=12, tzinfo=UTC)
        entries.append(entry(name, items, maintainer, when))
    return "\n".join(entries)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("changelog.py: give CHANGELOG.md VERSION MAINTAINER EPOCH")
    sys.stdout.write(main(*sys.argv[1:]))
