"""What a self-hoster can trust: SHA256SUMS signed (OpenPGP) by the release key, every artifact
covered by it, and an apt repository that apt accepts only signed and only untampered. dist/ is
signed with the tests' throwaway key (make test-release: packaging/test-key)."""

import shutil

import pytest
from apt_client import SOURCE, PrivateApt, served

from conftest import ARCHES, run


@pytest.fixture(scope="session")
def keyring(release):
    path = release.dir / "renard-archive-keyring.gpg"
    if not path.is_file():
        pytest.fail("dist/ is not signed: make test-release signs it (RENARD_SIGNING_KEY)")
    return path


def verifies(folder, keyring) -> bool:
    """As the guide tells a user: gpgv on SHA256SUMS.asc, then sha256sum --check."""
    signature = run("gpgv", "--keyring", keyring, "SHA256SUMS.asc", "SHA256SUMS", cwd=folder, check=False)
    checksums = run("sha256sum", "--check", "--strict", "SHA256SUMS", cwd=folder, check=False)
    return signature.returncode == 0 and checksums.returncode == 0


def flip_a_byte(path, at=None):
    data = bytearray(path.read_bytes())
    at = len(data) // 2 if at is None else at
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_sha256sums_signature_verifies_and_one_changed_byte_in_any_artifact_fails_it(release, keyring, tmp_path):
    assert verifies(release.dir, keyring)
    names = [line.split()[1] for line in (release.dir / "SHA256SUMS").read_text().splitlines()]
    assert len(names) == 3 * len(ARCHES)  # tarballs, packages, SBOMs
    for name in [*names, "SHA256SUMS"]:
        copy = tmp_path / name
        copy.mkdir()
        for file in [*names, "SHA256SUMS", "SHA256SUMS.asc"]:
            shutil.copy(release.dir / file, copy / file)
        flip_a_byte(copy / name)
        assert not verifies(copy, keyring), f"one byte changed in {name}, and the release still verifies"


def test_the_apt_repository_is_signed_and_lists_both_architectures(release, keyring):
    dists = release.dir / "apt" / "dists" / "stable"
    run("gpgv", "--keyring", keyring, dists / "InRelease")
    run("gpgv", "--keyring", keyring, dists / "Release.gpg", dists / "Release")
    assert (release.dir / "apt" / "renard-archive-keyring.gpg").read_bytes() == keyring.read_bytes()
    for arch in ARCHES.values():
        packages = (dists / "main" / f"binary-{arch}" / "Packages").read_text()
        assert f"Version: {release.version}\n" in packages and f"Architecture: {arch}\n" in packages
        assert f"Filename: pool/main/r/renard/renard_{release.version}_{arch}.deb\n" in packages


@pytest.fixture
def repository(release, keyring, tmp_path):
    """A copy of dist/apt, for a test to break."""
    copy = tmp_path / "apt"
    shutil.copytree(release.dir / "apt", copy)
    return copy


def test_apt_fetches_the_package_from_the_signed_repository(release, keyring, repository, tmp_path):
    with served(repository) as url:
        apt = PrivateApt(tmp_path / "client", SOURCE.format(keyring=keyring, url=url))
        update = apt("update")
        assert update.returncode == 0 and "W:" not in update.stderr, update.stderr
        got = apt("download", f"renard={release.version}", cwd=tmp_path)
        assert got.returncode == 0, got.stderr
    assert (tmp_path / release.deb().name).read_bytes() == release.deb().read_bytes()


def test_apt_refuses_an_unsigned_repository(keyring, repository, tmp_path):
    for signature in ["InRelease", "Release.gpg"]:
        (repository / "dists" / "stable" / signature).unlink()
    with served(repository) as url:
        apt = PrivateApt(tmp_path / "client", SOURCE.format(keyring=keyring, url=url))
        update = apt("update")
    assert update.returncode != 0 and "is not signed" in update.stderr, update.stderr


def test_apt_refuses_a_tampered_package(release, keyring, repository, tmp_path):
    flip_a_byte(repository / "pool" / "main" / "r" / "renard" / release.deb().name)
    with served(repository) as url:
        apt = PrivateApt(tmp_path / "client", SOURCE.format(keyring=keyring, url=url))
        assert apt("update").returncode == 0
        got = apt("download", f"renard={release.version}", cwd=tmp_path)
    assert got.returncode != 0 and "Hash Sum mismatch" in got.stderr, got.stderr
