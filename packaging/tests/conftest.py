"""Fixtures of the release tests: the release that `make release` wrote in dist/ (built once,
reused by every test), its tarballs unpacked, and a second build of the same commit in a clone
at another path (for the reproducibility and upgrade tests)."""

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


@dataclass(frozen=True)
class Release:
    dir: Path  # where the release's files are
    version: str  # "1.0.0"
    commit: str  # the full commit id it was built from
    epoch: int  # SOURCE_DATE_EPOCH: the commit's time

    def tarball(self, arch: str) -> Path:
        return self.dir / f"renard-{self.version}-{arch}-linux-musl.tar.gz"

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
    versions = {m.group(1) for n in names if (m := re.fullmatch(r"renard-(\d+\.\d+\.\d+)-\w+-linux-musl\.tar\.gz", n))}
    assert len(versions) == 1, f"SHA256SUMS should list the tarballs of one version: {names}"
    version = versions.pop()
    binary = unpacked_tarball(tmp_path_factory, DIST / f"renard-{version}-{HOST}-linux-musl.tar.gz") / "renard"
    line = run(binary, "--version").stdout.strip()
    match = re.fullmatch(rf"renard {re.escape(version)} \(commit ([0-9a-f]{{12}})\)", line)
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


def build_release(clone: Path, *args: str) -> Release:
    """The clone's own packaging/release, into the clone's dist/."""
    result = run(clone / "packaging" / "release", "--out", clone / "dist", *args, check=False, timeout=900)
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


@pytest.fixture(scope="session")
def bumped_release(release, tmp_path_factory) -> Release:
    """A release of the next patch version: the same commit with the crate's version bumped
    and committed in a clone, built for this machine only."""
    major, minor, patch = map(int, release.version.split("."))
    bumped = f"{major}.{minor}.{patch + 1}"
    clone = clone_at(release.commit, tmp_path_factory.mktemp("bumped") / "renard")
    crate = clone / "servers" / "rust"
    manifest = crate / "Cargo.toml"
    text = manifest.read_text()
    assert f'\nversion = "{release.version}"\n' in text, "servers/rust/Cargo.toml: the package's version line"
    manifest.write_text(text.replace(f'\nversion = "{release.version}"\n', f'\nversion = "{bumped}"\n', 1))
    lock = crate / "Cargo.lock"
    own = f'name = "renard"\nversion = "{release.version}"\n'
    assert own in lock.read_text(), "servers/rust/Cargo.lock: the renard package's entry"
    lock.write_text(lock.read_text().replace(own, f'name = "renard"\nversion = "{bumped}"\n'))
    identity = ["-c", "user.name=release test", "-c", "user.email=release-test@localhost"]
    run("git", "-C", clone, *identity, "commit", "--quiet", "-am", f"version {bumped}")
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
