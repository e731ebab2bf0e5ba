"""Entries: the manifests `servers/*/entry.toml` and `peers/*/entry.toml`.

A manifest holds one or more `[[entry]]` tables. Validation is strict: an unknown key, a
missing key or a value of the wrong type raises ManifestError naming the file and the key.
An entry whose required executables are missing is kept, marked unavailable with a reason.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..core.modes import KINDS

READY_MODES = ("listening", "port")
NAME_RE = re.compile(r"^[a-z0-9-]+$")
# Placeholders allowed in `run` ({name}) and, doubled ({{name}}), in a config template.
PLACEHOLDERS = ("listen", "host", "port", "count", "location", "threads", "config", "tmp")
RUN_PLACEHOLDER_RE = re.compile(r"\{([a-z_]+)\}")
CONFIG_PLACEHOLDER_RE = re.compile(r"\{\{([a-z_]+)\}\}")

# key -> (required, type check, description of the type for the error message)
_STR_LIST = (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings")
_STR = (lambda v: isinstance(v, str) and v != "", "a non-empty string")
MAX_WARMUP_S = 600  # the bench's own --warmup bound
_WARMUP = (
    lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_WARMUP_S,
    f"a whole number of seconds from 0 to {MAX_WARMUP_S} (wrk takes whole seconds)",
)
SCHEMA: dict[str, tuple[bool, tuple]] = {
    "name": (True, _STR),
    "language": (True, _STR),
    "kind": (True, _STR),
    "description": (True, _STR),
    "requires": (True, _STR_LIST),
    "build": (True, _STR_LIST),
    "run": (True, _STR),
    "artifacts": (True, _STR_LIST),
    "version": (True, _STR),
    "ready": (False, _STR),
    "config": (False, _STR),
    "command": (False, _STR),
    "test": (False, _STR_LIST),
    "apt": (False, _STR_LIST),
    "install": (False, _STR_LIST),
    "junit": (False, _STR_LIST),
    "runtime": (False, _STR_LIST),
    "native": (False, (lambda v: isinstance(v, bool), "true or false")),
    "warmup_s": (False, _WARMUP),
    "floor": (False, _STR),
}
DEFAULT_FLOOR = "floor"  # the epoll floor (peers/floor): the entry every ratio is divided by unless it names another


class ManifestError(Exception):
    """A manifest that cannot be used. str() is `FILE: KEY: reason`."""

    def __init__(self, path: Path, key: str, reason: str):
        super().__init__(f"{path}: {key}: {reason}")
        self.path, self.key, self.reason = path, key, reason


@dataclass
class Entry:
    name: str
    language: str
    kind: str  # one of modes.KINDS
    description: str
    requires: list[str]
    build: list[str]  # shell commands, cwd = folder
    run: str  # command template with {placeholders}
    artifacts: list[str]  # paths relative to folder (absolute allowed)
    version: str  # command printing the version
    folder: Path
    manifest: Path
    ready: str = "listening"
    config: str | None = None  # template file name in folder
    command: str | None = None  # the program alone, taking every flag of SPEC §1 (cwd = folder)
    test: list[str] = field(default_factory=list)  # the entry's own tests: shell commands, cwd = folder
    apt: list[str] = field(default_factory=list)  # Debian packages its build, run and tests need
    # Commands (cwd = folder) that install a toolchain Debian lacks, run by scripts/deps after apt.
    install: list[str] = field(default_factory=list)
    # Globs (in folder) of the JUnit XML reports its `test` commands write: arena check counts them.
    junit: list[str] = field(default_factory=list)
    runtime: list[str] = field(default_factory=list)  # what must be installed to run it beside the artifacts
    native: bool = False  # machine code: its instructions per request are counted under callgrind
    # Seconds of load before any measurement, at least: the time its throughput takes to
    # settle (a JIT compiling the hot path). The bench, gate, sweep and latency warm it up
    # for the larger of this and their own warm-up.
    warmup_s: int = 0
    # The floor of its mechanism (an entry of kind floor, e.g. floor-uring for io_uring): every
    # "of floor" ratio of this entry is divided by that floor's figure in the same mode.
    floor: str = DEFAULT_FLOOR
    missing: list[str] = field(default_factory=list)  # required executables not on PATH

    @property
    def repo(self) -> Path:
        """The repository: entries live in <repo>/servers/<name> or <repo>/peers/<name>."""
        return self.folder.parents[1]

    @property
    def available(self) -> bool:
        return not self.missing

    @property
    def reason(self) -> str | None:
        """Why the entry is unavailable; None when it is available."""
        if not self.missing:
            return None
        return "missing on PATH: " + ", ".join(self.missing)


def _check_table(path: Path, index: int, table: object) -> dict:
    where = f"entry[{index}]"
    if not isinstance(table, dict):
        raise ManifestError(path, where, "must be a table")
    for key in table:
        if key not in SCHEMA:
            raise ManifestError(path, f"{where}.{key}", "unknown key")
    for key, (required, (check, what)) in SCHEMA.items():
        if key not in table:
            if required:
                raise ManifestError(path, f"{where}.{key}", "missing key")
            continue
        if not check(table[key]):
            raise ManifestError(path, f"{where}.{key}", f"must be {what}")
    if not NAME_RE.match(table["name"]):
        raise ManifestError(path, f"{where}.name", f"must match [a-z0-9-]+ (got {table['name']!r})")
    if table["kind"] not in KINDS:
        raise ManifestError(path, f"{where}.kind", f"must be one of {', '.join(KINDS)} (got {table['kind']!r})")
    ready = table.get("ready", "listening")
    if ready not in READY_MODES:
        raise ManifestError(path, f"{where}.ready", f"must be one of {', '.join(READY_MODES)} (got {ready!r})")
    if "floor" in table and not NAME_RE.match(table["floor"]):
        raise ManifestError(path, f"{where}.floor", f"must name an entry, [a-z0-9-]+ (got {table['floor']!r})")
    for name in RUN_PLACEHOLDER_RE.findall(table["run"]):
        if name not in PLACEHOLDERS:
            raise ManifestError(path, f"{where}.run", f"unknown placeholder {{{name}}}")
    try:
        shlex.split(table["run"])
    except ValueError as e:
        raise ManifestError(path, f"{where}.run", f"cannot be split into words: {e}") from None
    if table["kind"] == "ours" and "command" not in table:
        raise ManifestError(path, f"{where}.command", "missing key (an `ours` entry names its program)")
    if "config" in table:
        template = path.parent / table["config"]
        if not template.is_file():
            raise ManifestError(path, f"{where}.config", f"no such file {template}")
        for name in CONFIG_PLACEHOLDER_RE.findall(template.read_text()):
            if name not in PLACEHOLDERS:
                raise ManifestError(path, f"{where}.config", f"unknown placeholder {{{{{name}}}}} in {template.name}")
    return table


def load_manifest(path: Path) -> list[Entry]:
    """The entries declared by one entry.toml; raises ManifestError."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ManifestError(path, "-", f"cannot be read as TOML: {e}") from None
    for key in data:
        if key != "entry":
            raise ManifestError(path, key, "unknown key (a manifest holds only [[entry]] tables)")
    tables = data.get("entry")
    if not isinstance(tables, list) or not tables:
        raise ManifestError(path, "entry", "missing key (at least one [[entry]] table)")
    entries = []
    for i, table in enumerate(tables):
        t = _check_table(path, i, table)
        entries.append(
            Entry(
                name=t["name"],
                language=t["language"],
                kind=t["kind"],
                description=t["description"],
                requires=t["requires"],
                build=t["build"],
                run=t["run"],
                artifacts=t["artifacts"],
                version=t["version"],
                ready=t.get("ready", "listening"),
                config=t.get("config"),
                command=t.get("command"),
                test=t.get("test", []),
                apt=t.get("apt", []),
                install=t.get("install", []),
                junit=t.get("junit", []),
                runtime=t.get("runtime", []),
                native=t.get("native", False),
                warmup_s=t.get("warmup_s", 0),
                floor=t.get("floor", DEFAULT_FLOOR),
                folder=path.parent,
                manifest=path,
                missing=[exe for exe in t["requires"] if shutil.which(exe) is None],
            )
        )
    return entries


def discover(repo: Path) -> list[Entry]:
    """Every entry under servers/ and peers/, ours first, each group sorted by folder.

    Raises ManifestError for the first broken manifest, a name declared twice, or a `floor`
    that names no entry of kind floor (the default, "floor", need not exist: a tree without it
    simply has no floor to divide by)."""
    entries: list[Entry] = []
    seen: dict[str, Path] = {}
    for group in ("servers", "peers"):
        for manifest in sorted((repo / group).glob("*/entry.toml")):
            for entry in load_manifest(manifest):
                if entry.name in seen:
                    raise ManifestError(manifest, "name", f"{entry.name!r} is already declared in {seen[entry.name]}")
                seen[entry.name] = manifest
                entries.append(entry)
    kinds = {e.name: e.kind for e in entries}
    for entry in entries:
        named = kinds.get(entry.floor)
        if named != "floor" and (named is not None or entry.floor != DEFAULT_FLOOR):
            why = "no entry of that name" if named is None else f"its kind is {named}, not floor"
            raise ManifestError(entry.manifest, f"{entry.name}.floor", f"{entry.floor!r} is not a floor ({why})")
    return entries


def select(entries: list[Entry], names: list[str]) -> list[Entry]:
    """The named entries in the order given; all entries when names is empty.

    Raises KeyError(name) for a name that is not declared."""
    if not names:
        return list(entries)
    by_name = {e.name: e for e in entries}
    for name in names:
        if name not in by_name:
            raise KeyError(name)
    return [by_name[n] for n in dict.fromkeys(names)]


def render_run(entry: Entry, values: dict[str, str]) -> list[str]:
    """argv for the entry's run command: split into words first, then every {name} in each
    word replaced by its value verbatim (a value with spaces or quotes stays one word)."""
    return [RUN_PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], word) for word in shlex.split(entry.run)]


def render_config(entry: Entry, values: dict[str, str]) -> str:
    """The entry's config template with every {{name}} replaced by its value verbatim."""
    template = (entry.folder / entry.config).read_text()
    return CONFIG_PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], template)


def artifact_paths(entry: Entry) -> list[Path]:
    return [entry.folder / a for a in entry.artifacts]


def artifact_bytes(entry: Entry) -> int | None:
    """Total size of the artifacts in bytes (directories summed recursively); None if one is missing."""
    return _bytes_of(artifact_paths(entry))


def runtime_bytes(entry: Entry) -> int | None:
    """Total size of what the entry needs installed to run (a JRE, an interpreter, nginx…):
    0 for a self-contained artifact; None if a runtime path is missing."""
    return _bytes_of([entry.folder / r for r in entry.runtime])


def _bytes_of(paths: list[Path]) -> int | None:
    total = 0
    for path in paths:
        if path.is_file():
            total += path.stat().st_size
        elif path.is_dir():
            total += sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
        else:
            return None
    return total
