"""packaging/version: a release's version says what was built. Each test tags and commits in a
throwaway clone of HEAD (the repository's own tags are never touched)."""

import re

import pytest

from conftest import IDENTITY, REPO, bump, clone_at, git, run


@pytest.fixture
def clone(tmp_path):
    """A clone of HEAD, with the crate's version and a dated CHANGELOG section for it."""
    where = clone_at(git("rev-parse", "HEAD"), tmp_path / "renard")
    # A clone of a local repository copies its tags: start from none.
    for tag in run("git", "-C", where, "tag", "--list").stdout.split():
        run("git", "-C", where, "tag", "--delete", tag)
    return where


def crate_version(clone) -> str:
    text = (clone / "servers" / "rust" / "Cargo.toml").read_text()
    return re.search(r'^version = "(.*)"$', text, re.M).group(1)


def version(clone, *args, check=True):
    return run(clone / "packaging" / "version", *args, check=check)


def tag(clone, name):
    run("git", "-C", clone, *IDENTITY, "tag", "--annotate", "--message", name, name)


def head(clone) -> str:
    return run("git", "-C", clone, "rev-parse", "HEAD").stdout.strip()


def test_an_untagged_commit_is_a_pre_release_that_sorts_below_its_version(clone):
    crate = crate_version(clone)
    count = run("git", "-C", clone, "rev-list", "--count", "HEAD").stdout.strip()
    got = version(clone).stdout.strip()
    assert got == f"{crate}~git{count}.{head(clone)[:12]}"
    assert run("dpkg", "--compare-versions", got, "lt", crate, check=False).returncode == 0


def test_the_commit_tagged_with_its_version_is_the_release(clone):
    crate = crate_version(clone)
    assert re.search(rf"^## \[{re.escape(crate)}\] - \d{{4}}-\d\d-\d\d$", (clone / "CHANGELOG.md").read_text(), re.M)
    tag(clone, f"v{crate}")
    assert version(clone).stdout.strip() == crate


def test_a_commit_after_a_release_sorts_above_it_until_the_version_is_bumped(clone):
    crate = crate_version(clone)
    tag(clone, f"v{crate}")
    run("git", "-C", clone, *IDENTITY, "commit", "--quiet", "--allow-empty", "-m", "after the release")
    got = version(clone).stdout.strip()
    assert got == f"{crate}+git1.{head(clone)[:12]}"
    assert run("dpkg", "--compare-versions", got, "gt", crate, check=False).returncode == 0
    major, minor, patch = map(int, crate.split("."))
    bumped = f"{major}.{minor}.{patch + 1}"
    bump(clone, crate, bumped)
    assert version(clone).stdout.strip() == f"{bumped}~git2.{head(clone)[:12]}"


def test_a_tag_that_is_not_the_crate_version_stops_the_release(clone):
    tag(clone, "v9.9.9")
    result = version(clone, check=False)
    assert result.returncode == 1 and "Cargo.toml says" in result.stderr


def test_a_tag_without_a_dated_changelog_section_stops_the_release(clone):
    crate = crate_version(clone)
    changelog = clone / "CHANGELOG.md"
    changelog.write_text(
        re.sub(rf"^## \[{re.escape(crate)}\] - .*$", f"## [{crate}]", changelog.read_text(), flags=re.M)
    )
    run("git", "-C", clone, *IDENTITY, "commit", "--quiet", "-am", "an undated section")
    tag(clone, f"v{crate}")
    result = version(clone, check=False)
    assert result.returncode == 1 and "no dated section" in result.stderr


def test_uncommitted_packaging_changes_mark_the_build_dirty_and_it_is_never_signed(clone):
    crate = crate_version(clone)
    tag(clone, f"v{crate}")
    with (clone / "packaging" / "deb" / "renard.conf").open("a") as conf:
        conf.write("# an uncommitted change\n")
    assert version(clone).stdout.strip() == f"{crate}~git0.{head(clone)[:12]}.dirty"
    # packaging/release refuses to sign it, before building anything.
    env = {"RENARD_SIGNING_KEY": "0000", "PATH": "/usr/bin:/bin", "HOME": str(clone)}
    result = run(clone / "packaging" / "release", "--out", clone / "dist", check=False, env=env)
    assert result.returncode == 1 and "never signed" in result.stderr
    assert not (clone / "dist" / "SHA256SUMS").exists()


def test_bad_usage_names_the_flag_and_exits_2():
    result = run(REPO / "packaging" / "version", "--commit", "no-such-commit", check=False)
    assert result.returncode == 2 and result.stderr.startswith("version: --commit:")
