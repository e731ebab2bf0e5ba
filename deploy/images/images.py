"""An image per renard, built by podman from files of this host (no registry): how each is
staged, built and sized. The recipe is data (RECIPES, one per entry) plus one Containerfile
per entry beside this file; the base and the application are two images, as the Java seed
(the seeds' 003_…txt in ../shared/seeds, table 1) split a deployed service into a base image and the
application on top of it.

A build context holds base/ (what the application runs on: nothing for a static binary, the
libraries `ldd` names for a dynamic one, a runtime and its libraries, or Debian packages)
and app/ (the entry's own files, under /renard). `base.Containerfile` makes the base image
from base/ (FROM scratch); `NAME.Containerfile` puts app/ on top of it, or on scratch when
the base is empty.

Sizes are podman's (`image inspect` .Size): bytes of the layers, as a registry would store
them uncompressed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
APP_ROOT = "/renard"  # where app/ lands in the image; each entry's WORKDIR
LDD_LINE = re.compile(r"^\s*(?:\S+ => )?(/\S+) \(0x[0-9a-f]+\)$")
SECCOMP_DEFAULT = "/usr/share/containers/seccomp.json"  # podman's default profile (containers-common)
IO_URING_CALLS = ("io_uring_setup", "io_uring_enter", "io_uring_register")
# Files of the Debian packages an interpreter never opens at run time.
# The base is unpacked as mmdebstrap wrote it (absolute links and all): the 'fully_trusted'
# filter where tarfile has filters (3.11.4+); Debian 12's 3.11.2 has none and does the same.
TRUSTED = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
DEBIAN_SKIPPED = ("./usr/share/doc/", "./usr/share/man/", "./usr/share/lintian/", "./usr/share/locale/", "./dev/")


@dataclass(frozen=True)
class Recipe:
    """What an entry's image holds. `folder`: servers/FOLDER. `app`: paths in the folder,
    copied to /renard/PATH. `binaries`: host files (absolute, or relative to the folder) put in
    the base at the image path given, with every library `ldd` names for them. `runtime`: a
    folder of the entry (relative) put in the base at /renard/PATH with the libraries of its
    ELF files. `debian`: Debian packages (the base is their files, unpacked by mmdebstrap's
    extract variant). `pip`: Python packages (name==version) installed into /renard/site, their
    shared objects stripped of their symbols (uvloop's wheel ships 13 MB of them)."""

    folder: str
    app: tuple[str, ...]
    binaries: dict[str, str] = field(default_factory=dict)
    runtime: str | None = None
    debian: tuple[str, ...] = ()
    pip: tuple[str, ...] = ()
    io_uring: bool = False  # it needs io_uring, which podman's default seccomp profile refuses
    probe: tuple[str, ...] = ()  # a command run in the image (its ENTRYPOINT replaced) that must exit 0

    @property
    def has_base(self) -> bool:
        return bool(self.binaries or self.runtime or self.debian)


JS_BINARIES = {"deno": "node_modules/deno/deno", "bun": "node_modules/bun/bin/bun.exe"}

# Entry name -> recipe; every `ours` entry of servers/ has one (test_images checks it).
RECIPES: dict[str, Recipe] = {
    "rust": Recipe("rust", app=("bin/renard",)),
    "c": Recipe("c", app=("bin/renard-c",)),
    "cpp": Recipe("cpp", app=("bin/renard-cpp",), io_uring=True),
    "go": Recipe("go", app=("bin/renard-go",)),
    "ada": Recipe("ada", app=("bin/renard-ada",), binaries={"bin/renard-ada": ""}),
    "java": Recipe(
        "java",
        app=("target/renard.jar", "target/renard.jsa"),
        runtime="target/runtime",
        # -Xshare:on fails where the archive would be ignored (a jar path or mtime it does not know)
        probe=(
            "/renard/target/runtime/bin/java",
            "-XX:SharedArchiveFile=target/renard.jsa",
            "-Xshare:on",
            "-Xlog:cds=off",
            "-XX:+UseSerialGC",
            "-Xmx64m",
            "-jar",
            "target/renard.jar",
            "--version",
        ),
    ),
    "js-node": Recipe("js", app=("src",), binaries={"/usr/bin/node": "/usr/bin/node"}),
    "js-deno": Recipe("js", app=("src",), binaries={JS_BINARIES["deno"]: "/usr/local/bin/deno"}),
    "js-bun": Recipe("js", app=("src",), binaries={JS_BINARIES["bun"]: "/usr/local/bin/bun"}),
    "python": Recipe(
        "python",
        app=("src/renard_py",),
        debian=("python3.11-minimal", "libpython3.11-stdlib"),
        pip=("uvloop==0.23.0",),
    ),
}


@dataclass(frozen=True)
class Sizes:
    """An image's size split as the seed split it: base image, application on top (bytes)."""

    entry: str
    base_bytes: int
    image_bytes: int

    @property
    def app_bytes(self) -> int:
        return self.image_bytes - self.base_bytes

    def to_json(self) -> dict:
        return {"entry": self.entry, "base_bytes": self.base_bytes, "image_bytes": self.image_bytes}


class StageError(Exception):
    """An entry's image cannot be staged here: a file is missing (not built), a tool fails."""


def stage(entry: str, context: Path) -> Recipe:
    """Fills context/base and context/app for the entry's image; returns its recipe.
    Raises StageError."""
    recipe = RECIPES[entry]
    folder = REPO / "servers" / recipe.folder
    base, app = context / "base", context / "app"
    for path in (base, app):
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
    for rel in recipe.app:
        _copy(folder / rel, app / rel)
    elves: list[Path] = []
    for host, image_path in recipe.binaries.items():
        source = Path(host) if Path(host).is_absolute() else folder / host
        if image_path:  # else: the binary is in app/, only its libraries go to the base
            _copy(source, base / image_path.lstrip("/"))
        elves.append(source)
    inside = folder.resolve() / (recipe.runtime or "bin")  # libraries found there are already staged
    if recipe.runtime:
        _copy(folder / recipe.runtime, base / APP_ROOT.lstrip("/") / recipe.runtime)
        elves += [p for p in (folder / recipe.runtime).rglob("*") if p.is_file() and _is_elf(p)]
    for library in sorted({lib for elf in elves for lib in libraries(elf) if not lib.is_relative_to(inside)}):
        _copy(library, base / str(library).lstrip("/"))
    if recipe.debian:
        _unpack_debian(recipe.debian, base)
    if recipe.pip:
        # The pip of the Python running this (the project's .venv, which has one): a bare `pip`
        # is not on a fresh Debian's PATH (no python3-pip there; found by make test-fresh).
        _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:",
              "--python-version", "3.11", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64",
              "--target", str(app / "site"),
              *recipe.pip])  # fmt: skip
        for path in (app / "site").rglob("*.so"):
            _run(["strip", "--strip-unneeded", str(path)])
    return recipe


def libraries(elf: Path) -> list[Path]:
    """The shared libraries `ldd` names for elf (with the dynamic loader), resolved; [] for a
    static one."""
    result = subprocess.run(["ldd", str(elf)], capture_output=True, text=True)
    if result.returncode != 0:  # "not a dynamic executable"
        return []
    found = []
    for line in result.stdout.splitlines():
        match = LDD_LINE.match(line)
        if match:
            found.append(Path(match.group(1)))
    return found


def build(podman: list[str], entry: str, context: Path, tag: str) -> Sizes:
    """Stages and builds the entry's image as `tag` (its base as `tag`-base) with the podman
    argv given; returns its sizes. Raises StageError, subprocess.CalledProcessError."""
    recipe = stage(entry, context)
    base_bytes = 0
    base_tag = f"{tag}-base"
    if recipe.has_base:
        _run([*podman, "build", "--quiet", "-f", str(HERE / "base.Containerfile"), "-t", base_tag, str(context)])
        base_bytes = image_bytes(podman, base_tag)
    containerfile = HERE / f"{entry}.Containerfile"
    args = ["--build-arg", f"BASE={base_tag}"] if recipe.has_base else []
    _run([*podman, "build", "--quiet", "--format", "docker", *args, "-f", str(containerfile), "-t", tag, str(context)])
    return Sizes(entry, base_bytes, image_bytes(podman, tag))


def seccomp_with_io_uring(target: Path) -> Path:
    """podman's default seccomp profile with io_uring's three system calls allowed, written to
    target: what an image whose entry needs io_uring runs under (--security-opt seccomp=target),
    where `seccomp=unconfined` would drop every other filter too."""
    profile = json.loads(Path(SECCOMP_DEFAULT).read_text())
    profile["syscalls"].append({"names": list(IO_URING_CALLS), "action": "SCMP_ACT_ALLOW"})
    target.write_text(json.dumps(profile))
    return target


def image_bytes(podman: list[str], tag: str) -> int:
    return int(_run([*podman, "image", "inspect", "--format", "{{.Size}}", tag]).strip())


def record(sizes: Sizes, folder: Path) -> Path:
    """Writes folder/ENTRY.json (what `arena footprint --images` reads); returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sizes.entry}.json"
    part = path.with_suffix(".part")
    part.write_text(json.dumps(sizes.to_json(), indent=2) + "\n")
    os.replace(part, path)
    return path


def _copy(source: Path, target: Path) -> None:
    """Copies a file (following links: a library's soname link becomes the file) or a folder
    (keeping its links); mtimes kept (the Java archive checks its jar's)."""
    if not source.exists():
        raise StageError(f"{source} is missing (build the entry first: arena build NAME)")
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(source, target)


def _is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def _unpack_debian(packages: tuple[str, ...], base: Path) -> None:
    """The packages and their dependencies from the Debian 12 archive this host's apt uses,
    unpacked without their maintainer scripts (mmdebstrap --variant=extract: no dpkg, no
    shell), documentation left out. The tarball is cached under results/rootfs/ by a key of
    the package list (as scripts/rootfs caches its own): made once (about a minute), then reused."""
    key = hashlib.sha256(",".join(packages).encode()).hexdigest()[:12]
    tarball = REPO / "results" / "rootfs" / f"image-base-{key}.tar"
    if not tarball.is_file():
        tarball.parent.mkdir(parents=True, exist_ok=True)
        part = tarball.with_suffix(".part")
        _run(["mmdebstrap", "--quiet", "--format=tar", "--variant=extract", f"--include={','.join(packages)}",
              "bookworm", str(part)])  # fmt: skip
        os.replace(part, tarball)
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if not m.name.startswith(DEBIAN_SKIPPED) and not m.isdev()]
        tar.extractall(base, members=members, **TRUSTED)


def _run(argv: list[str]) -> str:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise StageError(f"{' '.join(argv[:6])} …: exit {result.returncode}: {result.stderr.strip()[-1500:]}")
    return result.stdout
