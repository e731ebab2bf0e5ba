"""Fixtures of the release tests: the release that `make release` wrote in dist/ (built once,
reused by every test), its tarballs unpacked, and a second build of the same commit in a clone
at another path (for the reproducibility and upgrade tests)."""

import os
import platform
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "dist"
ARCHES = {"x86_64": "amd64", "aarch64": "arm64"}  # uname -m -> Debian's architecture
HOST = platform.machine()
# The throwaway signing key of the tests (packaging/test-key; make test-release signs dist/ with it).
TEST_GNUPG = DIST / ".build" / "test-gnupg"
# A release's version (packaging/version): X.Y.Z, or X.Y.Z~gitN.HASH / X.Y.Z+gitN.HASH, maybe .dirty.
VERSION = r"(\d+\.\d+\.\d+)((?:[~+]git\d+\.[0-9a-f]{12})?(?:\.dirty)?)"


@dataclass(frozen=True)
class Release:
    dir: Path  # where the release's files are
    version: str  # the package's: "1.1.0", or a pre-release "1.1.0~git3.1a2b3c4d5e6f"
    commit: str  # the full commit id it was built from
    epoch: int  # SOURCE_DATE_EPOCH: the commit's time

    @property
    def crate_version(self) -> str:
        """Cargo.toml's X.Y.Z, which the binary's --version prints."""
        return re.match(VERSION, self.version).group(1)

    def tarball(self, arch: str) -> Path:
        return self.dir / f"renard-{self.version}-{arch}-linux-musl.tar.gz"

    def sbom(self, arch: str = HOST) -> Path:
        return self.dir / f"renard-{self.version}-{arch}.cdx.json"

    def deb(self, arch: str = HOST) -> Path:
        return self.dir / f"renard_{self.version}_{ARCHES[arch]}.deb"


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    """Run a command; its output as text; check unless told otherwise."""
    kwargs.setdefault("check", True)
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 600)
    return subprocess.run([str(a) for a in args], **kwargs)


def git(*args) -> str:
    return run("git", "-C", REPO, *args).stdout.strip()


@pytest.fixture(scope="session")
def release(tmp_path_factory) -> Release:
    """dist/ as make release wrote it; the commit is the one its host binary names."""
    if not (DIST / "SHA256SUMS").is_file():
        pytest.fail("dist/SHA256SUMS is missing: run make release first (make test-release does)")
    names = [line.split()[1] for line in (DIST / "SHA256SUMS").read_text().splitlines()]
    versions = {m.group(1) for n in names if (m := re.fullmatch(rf"renard-({VERSION})-\w+-linux-musl\.tar\.gz", n))}
    assert len(versions) == 1, f"SHA256SUMS should list the tarballs of one version: {names}"
    version = versions.pop()
    binary = unpacked_tarball(tmp_path_factory, DIST / f"renard-{version}-{HOST}-linux-musl.tar.gz") / "renard"
    line = run(binary, "--version").stdout.strip()
    crate = re.match(VERSION, version).group(1)
    match = re.fullmatch(rf"renard {re.escape(crate)} \(commit ([0-9a-f]{{12}})\)", line)
    assert match, f"--version of the release's binary: {line!r}"
    commit = git("rev-parse", "--verify", f"{match.group(1)}^{{commit}}")
    return Release(DIST, version, commit, int(git("log", "-1", "--format=%ct", commit)))


def unpacked_tarball(tmp_path_factory, tarball: Path) -> Path:
    """The tarball unpacked in a folder of its own; its one top folder."""
    into = tmp_path_factory.mktemp(tarball.name.removesuffix(".tar.gz"))
    run("tar", "--extract", "--gzip", "--file", tarball, "--directory", into)  # as a user would
    (top,) = into.iterdir()
    return top


@pytest.fixture(scope="session")
def unpacked(release, tmp_path_factory):
    """arch -> the release's tarball for it, unpacked (once per session)."""
    cache: dict[str, Path] = {}

    def unpack(arch: str) -> Path:
        if arch not in cache:
            cache[arch] = unpacked_tarball(tmp_path_factory, release.tarball(arch))
        return cache[arch]

    return unpack


@pytest.fixture(scope="session")
def host_binary(unpacked) -> Path:
    return unpacked(HOST) / "renard"


@pytest.fixture(scope="session")
def help_text(host_binary) -> str:
    return run(host_binary, "--help").stdout


def clone_at(commit: str, where: Path) -> Path:
    """A clone of the repository at commit, in a folder of its own (another path than REPO)."""
    run("git", "clone", "--quiet", "--no-checkout", REPO, where)
    run("git", "-C", where, "checkout", "--quiet", "--detach", commit)
    return where


def signing_env() -> dict[str, str]:
    """The environment of a signed build: the tests' throwaway key (packaging/test-key)."""
    key = run(REPO / "packaging" / "test-key", TEST_GNUPG).stdout.strip()
    return {**os.environ, "GNUPGHOME": str(TEST_GNUPG), "RENARD_SIGNING_KEY": key}


def build_release(clone: Path, *args: str) -> Release:
    """The clone's own packaging/release, into the clone's dist/, signed with the test key."""
    result = run(
        clone / "packaging" / "release", "--out", clone / "dist", *args, check=False, timeout=900, env=signing_env()
    )
    assert result.returncode == 0, f"packaging/release in {clone} failed:\n{result.stderr[-3000:]}"
    version = re.search(r"^release: renard (\S+) \(commit", result.stdout, re.M).group(1)
    commit = run("git", "-C", clone, "rev-parse", "HEAD").stdout.strip()
    epoch = int(run("git", "-C", clone, "log", "-1", "--format=%ct").stdout)
    return Release(clone / "dist", version, commit, epoch)


@pytest.fixture(scope="session")
def second_build(release, tmp_path_factory) -> Release:
    """The same commit built again from a clone at another path, with its own cargo target."""
    clone = clone_at(release.commit, tmp_path_factory.mktemp("elsewhere") / "renard-second-build")
    try:
        yield build_release(clone)
    finally:
        shutil.rmtree(clone, ignore_errors=True)


IDENTITY = ["-c", "user.name=release test", "-c", "user.email=release-test@localhost"]


def bump(clone: Path, old: str, new: str) -> None:
    """Commit the crate's version new in clone (Cargo.toml, Cargo.lock) with a dated CHANGELOG
    section for it, as a maintainer prepares a release."""
    crate = clone / "servers" / "rust"
    manifest = crate / "Cargo.toml"
    text = manifest.read_text()
    assert f'\nversion = "{old}"\n' in text, "servers/rust/Cargo.toml: the package's version line"
    manifest.write_text(text.replace(f'\nversion = "{old}"\n', f'\nversion = "{new}"\n', 1))
    lock = crate / "Cargo.lock"
    own = f'name = "renard"\nversion = "{old}"\n'
    assert own in lock.read_text(), "servers/rust/Cargo.lock: the renard package's entry"
    lock.write_text(lock.read_text().replace(own, f'name = "renard"\nversion = "{new}"\n'))
    changelog = clone / "CHANGELOG.md"
    section = f"## [{new}] - 2026-12-01\n\n### Fixed\n\n- The release tests' version.\n\n"
    changelog.write_text(changelog.read_text().replace("## [Unreleased]\n\n", f"## [Unreleased]\n\n{section}", 1))
    run("git", "-C", clone, *IDENTITY, "commit", "--quiet", "-am", f"version {new}")


@pytest.fixture(scope="session")
def bumped_release(release, tmp_path_factory) -> Release:
    """The release of the next patch version, made as a maintainer makes one: in a clone of the
    same commit, the version bumped with its dated CHANGELOG section, committed and tagged
    vX.Y.Z; built (signed, with its apt repository) for this machine only."""
    major, minor, patch = map(int, release.crate_version.split("."))
    bumped = f"{major}.{minor}.{patch + 1}"
    clone = clone_at(release.commit, tmp_path_factory.mktemp("bumped") / "renard")
    bump(clone, release.crate_version, bumped)
    run("git", "-C", clone, *IDENTITY, "tag", "--annotate", "--message", f"renard {bumped}", f"v{bumped}")
    try:
        yield build_release(clone, "--arch", HOST)
    finally:
        shutil.rmtree(clone, ignore_errors=True)


@pytest.fixture
def public_dir():
    """A folder that every user may read and enter (pytest's own is root's alone), removed after."""
    path = Path(tempfile.mkdtemp(prefix="renard-release-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
