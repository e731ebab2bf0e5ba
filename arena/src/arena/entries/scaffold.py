"""`arena new`: the skeleton of a new entry, and nothing that pretends to work.

It writes servers/NAME/ (kind ours) or peers/NAME/ (kind peer) with a commented entry.toml
that the arena can load (so `arena list` and every other command keep working), a README
with the headings every entry's README has, and a .gitignore for the build outputs. No
build script and no program: until the contributor writes them, `arena check NAME` names
each missing piece.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.columns import HEADER

NAME_RE = re.compile(r"^[a-z][a-z0-9-]*$")  # a plain identifier: also a folder and a column name
TODO = "TODO"  # a description still starting with this is not finished (arena check says so)

OURS_TOML = """\
# How the arena builds, runs, versions and tests {name} (every key: arena/README.md, "Entries").
[[entry]]
name = "{name}"
language = "{language}"
kind = "ours"                      # ours: byte-for-byte the flagship's answers (spec/SPEC.md)
description = "{todo}: one line on the design (event loop, parser, threads)"
requires = []                      # executables the build and run need on PATH, e.g. ["go"]
build = ["./build"]                # shell commands in this folder; they make every artifact
# {{listen}} {{count}} {{location}} {{threads}}: the SPEC §1 flags the arena passes
run = "bin/renard-{name} --listen {{listen}} --count {{count}} --location {{location}} --threads {{threads}}"
artifacts = ["bin/renard-{name}"]  # what the build makes; its bytes are the footprint
version = "bin/renard-{name} --version"
ready = "listening"                # the program prints `listening on http://HOST:PORT` on stderr
command = "bin/renard-{name}"      # the program alone: the suite adds every SPEC §1 flag
test = []                          # the language's own test runner, e.g. ["go test ./..."]
apt = []                           # Debian packages its build, run and tests need
# warmup_s = 10                   # a JIT runtime: seconds of load its throughput needs to settle
# floor = "floor-uring"           # the floor of its I/O mechanism (default "floor", epoll): its ratios' divisor
"""

PEER_TOML = """\
# How the arena builds, runs and versions the peer {name} (every key: arena/README.md, "Entries").
[[entry]]
name = "{name}"
language = "{language}"
kind = "peer"                      # peer: what people run instead; it needs the core route only
tier = "production"                # production: its language's usual server as users write it; or infrastructure
# tuned = "go"                     # production: its language's tuned renard (kind ours), the idiom's divisor
description = "{todo}: one line: the server and how it is tuned"
requires = []                      # executables it needs on PATH, e.g. ["nginx"]
build = []                         # shell commands in this folder, if it has anything to build
# {{listen}} {{host}} {{port}} {{count}} {{location}} {{threads}} {{config}} {{tmp}}
run = "./run --listen {{listen}} --count {{count}} --location {{location}}"
artifacts = ["run"]                # the files it runs from; their bytes are the footprint
version = "./run --version"
ready = "port"                     # the arena waits for the port (or "listening", see arena/README.md)
apt = []                           # Debian packages it needs
# warmup_s = 10                   # a JIT runtime: seconds of load its throughput needs to settle
# floor = "floor-uring"           # the floor of its I/O mechanism (default "floor", epoll): its ratios' divisor
# pipelining = false              # production: its library drops pipelined requests (say why in its README)
"""

README = """\
# renard in {language} (`{name}`)

{todo}: what this entry is, in two sentences.

## Build, run, test

```sh
.venv/bin/arena check {name}      # from the repository root: every check, one line each
```

## Design

{todo}: the event loop, the parser (complete / need more / error in one place), the threads.

## Dependencies

{todo}: each library, and why it (or none).

## Deviations

{todo}: what differs from the flagship, or "none".

## Results

The row this entry takes in the README's results table, as `arena row {name}` prints it
from the latest `arena bench` run; `arena check {name}` compares the line starting with
`` | `{name}` `` with it.

{header}
"""
RESULTS_HEADER = HEADER  # the columns of the README's results table, one constant for both


class NewEntryError(ValueError):
    """A name that cannot be used: str() is the one line to print."""


def check_name(name: str, repo: Path, taken: set[str]) -> None:
    """Raises NewEntryError when NAME is not a plain identifier or is already used."""
    if not NAME_RE.match(name):
        raise NewEntryError(f"{name!r} is not a plain identifier (lower-case letters, digits, '-'; a letter first)")
    for group in ("servers", "peers"):
        if (repo / group / name).exists():
            raise NewEntryError(f"{group}/{name} already exists")
    if name in taken:
        raise NewEntryError(f"an entry named {name!r} already exists")


def create(repo: Path, name: str, language: str, peer: bool) -> Path:
    """Writes the skeleton; returns its folder. Call check_name first."""
    folder = repo / ("peers" if peer else "servers") / name
    folder.mkdir(parents=True)
    values = {"name": name, "language": language.replace('"', "'"), "todo": TODO, "header": RESULTS_HEADER}
    (folder / "entry.toml").write_text((PEER_TOML if peer else OURS_TOML).format(**values))
    (folder / "README.md").write_text(README.format(**values))
    (folder / ".gitignore").write_text("bin/\n")
    return folder
