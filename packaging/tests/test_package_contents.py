"""What the package says about itself (read from the .deb, as dpkg would unpack it): the Debian
changelog made from CHANGELOG.md, every linked crate's licence and copyright notice, the SBOM,
and the dependency list embedded in the binary (cargo auditable), which rust-audit-info reads
back as `cargo audit bin` does."""

import gzip
import json
import re
import shutil

import pytest

from conftest import HOST, REPO, run

DOC = "usr/share/doc/renard"


@pytest.fixture(scope="session")
def unpacked_deb(release, tmp_path_factory):
    into = tmp_path_factory.mktemp("deb")
    run("dpkg-deb", "--extract", release.deb(HOST), into)
    return into


def test_the_debian_changelog_is_made_from_changelog_md(release, unpacked_deb):
    text = gzip.decompress((unpacked_deb / DOC / "changelog.gz").read_bytes()).decode()
    (unpacked_deb / "changelog").write_text(text)
    entries = run("dpkg-parsechangelog", "-l", unpacked_deb / "changelog", "--all", "--format", "rfc822").stdout
    parsed = re.findall(r"^Version: (.*)$", entries, re.M)
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d\d-\d\d$", (REPO / "CHANGELOG.md").read_text(), re.M)
    if release.version in released:
        assert parsed == released
    else:
        assert parsed[0] == release.version and parsed[1:] == [v for v in released if v != release.crate_version]
    assert "SCHED_BATCH" in text  # an item of 1.1.0's section


def crates_in_binary(binary) -> set[tuple[str, str]]:
    """(name, version) of every crate cargo auditable embedded, renard's own excepted."""
    if shutil.which("rust-audit-info") is None:
        pytest.fail("rust-audit-info is missing: packaging/install-cargo-tools installs it")
    audit = json.loads(run("rust-audit-info", binary).stdout)
    return {(p["name"], p["version"]) for p in audit["packages"] if p["name"] != "renard"}


def test_the_binary_embeds_its_dependency_list_and_the_sbom_and_notices_name_the_same_crates(release, unpacked_deb):
    crates = crates_in_binary(unpacked_deb / "usr/bin/renard")
    assert {"mio", "libc", "fastrand"} <= {name for name, _ in crates}
    sbom = json.loads((unpacked_deb / DOC / "renard.cdx.json").read_text())
    assert sbom["metadata"]["component"]["version"] == release.version
    in_sbom = {(c["name"], c["version"]) for c in sbom["components"]}
    assert crates <= in_sbom, f"crates in the binary but not in the SBOM: {crates - in_sbom}"
    notices = (unpacked_deb / DOC / "LICENSES-crates.txt").read_text()
    for name, version in crates:
        assert re.search(rf"^  {re.escape(name)} {re.escape(version)}$", notices, re.M), f"no licence for {name}"
    assert notices.count("Copyright") >= len({n for n, _ in crates}) // 2
    assert (release.sbom(HOST)).read_bytes() == (unpacked_deb / DOC / "renard.cdx.json").read_bytes()


def test_the_copyright_file_points_at_the_notices(unpacked_deb):
    copyright = (unpacked_deb / DOC / "copyright").read_text()
    assert "/usr/share/doc/renard/LICENSES-crates.txt" in copyright
