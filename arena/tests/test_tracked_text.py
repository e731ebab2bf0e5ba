"""Every tracked text file reads the same from any checkout: it names no absolute path of one
machine (the folder where this checkout and its shared folder stand, a home directory, a test
run's temporary folder) and no tracker's issue by number, which no reader of the repository
has: a page says what was done, or links the section that does. CHANGELOG.md alone names
issues."""

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ISSUE = re.compile(r"\bissues? #?\d+", re.I)


def machine_paths() -> re.Pattern:
    """Where this checkout and its shared folder stand (the checkout's own path, and ../shared
    beside it), a home folder of a user, pytest's and mkdtemp's temporary folders. Not the
    checkout's parent as a whole: cloned into /root, that would be every path under /root,
    /root/.cargo among them, which the release's pages name on purpose."""
    paths = [r"/home/[a-z_][a-z0-9_.-]*/", r"/Users/[A-Za-z][\w.-]*/", r"/tmp/pytest-of[-]", r"/tmp/tmp[a-z0-9_]{8}\b"]
    paths += [re.escape(f"{REPO}/"), re.escape(f"{REPO.parent / 'shared'}/")]
    return re.compile("|".join(paths))


def tracked_texts() -> dict[str, str]:
    """Every tracked file that is text (UTF-8, no NUL byte), by its path in the repository."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    texts = {}
    for name in listed.decode().split("\0"):
        path = REPO / name
        if not name or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            texts[name] = data.decode()
        except UnicodeDecodeError:
            continue
    return texts


def lines_matching(pattern: re.Pattern, texts: dict[str, str]) -> dict[str, list[str]]:
    found = {}
    for name, text in texts.items():
        hits = [f"{n}: {line.strip()[:120]}" for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
        if hits:
            found[name] = hits
    return found


def test_no_tracked_text_names_a_path_of_this_machine():
    texts = tracked_texts()
    assert len(texts) > 100 and "README.md" in texts  # the listing worked
    assert lines_matching(machine_paths(), texts) == {}


def test_no_tracked_text_but_the_changelog_names_an_issue_by_number():
    texts = tracked_texts()
    found = lines_matching(ISSUE, {name: text for name, text in texts.items() if name != "CHANGELOG.md"})
    assert found == {}
    assert ISSUE.search(texts["CHANGELOG.md"])  # the pattern finds what the changelog holds
