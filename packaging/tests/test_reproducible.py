"""Two builds of one commit give the same bytes: dist/ from make release, and the commit built
again by its own packaging/release in a clone at another path, with a cargo target of its own."""

from conftest import REPO, git


def test_a_second_build_elsewhere_has_the_same_checksums(release, second_build):
    assert second_build.commit == release.commit
    assert not second_build.dir.is_relative_to(REPO)
    first = (release.dir / "SHA256SUMS").read_text()
    second = (second_build.dir / "SHA256SUMS").read_text()
    dirty = git("status", "--porcelain", "--", "packaging")
    assert second == first, "the same commit built twice gives other bytes" + (
        f" (dist/ was built with uncommitted packaging/ changes: {dirty})" if dirty else ""
    )
