"""Entries: the manifests `servers/*/entry.toml` and `peers/*/entry.toml`.

A manifest holds one or more `[[entry]]` tables, each declared by the dataclass Entry (pydantic
validates it). Validation is strict: an unknown key, a missing key or a value of the wrong type
raises ManifestError naming the file and the key.
An entry whose required executables are missing is kept, marked unavailable with a reason.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, get_args, get_type_hints

from pydantic import AfterValidator, ConfigDict, Field, Strict, ValidationError

from ..core.modes import KIND_TIERS, KINDS, MODES, PEER_TIERS, runs_in
from ..core.schema import adapter

READY_MODES = ("listening", "port")
NAME_RE = re.compile(r"^[a-z0-9-]+$")
# Placeholders allowed in `run` ({name}) and, doubled ({{name}}), in a config template.
PLACEHOLDERS = ("listen", "host", "port", "count", "location", "threads", "config", "tmp")
RUN_PLACEHOLDER_RE = re.compile(r"\{([a-z_]+)\}")
CONFIG_PLACEHOLDER_RE = re.compile(r"\{\{([a-z_]+)\}\}")
MAX_WARMUP_S = 600  # the bench's own --warmup bound
DEFAULT_FLOOR = "floor"  # the epoll floor (peers/floor): the entry every ratio is divided by unless it names another


def _must(ok, what: str) -> AfterValidator:
    """A check after the type's: a value for which ok(value) is false is the error `WHAT (got VALUE)`."""

    def validate(value):
        if not ok(value):
            raise ValueError(f"{what} (got {value!r})")
        return value

    return AfterValidator(validate)


def _words(run: str) -> str:
    """`run`, once its placeholders are known and it splits into words."""
    for name in RUN_PLACEHOLDER_RE.findall(run):
        if name not in PLACEHOLDERS:
            raise ValueError(f"unknown placeholder {{{name}}}")
    try:
        shlex.split(run)
    except ValueError as e:
        raise ValueError(f"cannot be split into words: {e}") from None
    return run


# The types of entry.toml's keys. The string closing each is what a value of the wrong type
# "must be" in the error message; a _must check follows once the type holds.
Text = Annotated[str, Strict(), Field(min_length=1), "a non-empty string"]
Texts = Annotated[list[Annotated[str, Strict()]], Strict(), "a list of strings"]
Seconds = Annotated[
    int,
    Strict(),
    Field(ge=0, le=MAX_WARMUP_S),
    f"a whole number of seconds from 0 to {MAX_WARMUP_S} (wrk takes whole seconds)",
]
Flag = Annotated[bool, Strict(), "true or false"]


class ManifestError(Exception):
    """A manifest that cannot be used. str() is `FILE: KEY: reason`."""

    def __init__(self, path: Path, key: str, reason: str):
        super().__init__(f"{path}: {key}: {reason}")
        self.path, self.key, self.reason = path, key, reason


@dataclass
class Entry:
    """One [[entry]] table: its keys are the fields up to `folder` (pydantic reads them; an
    unknown key is an error), the rest is filled in by load_manifest."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: Annotated[Text, _must(NAME_RE.match, "must match [a-z0-9-]+")]
    language: Text
    kind: Annotated[Text, _must(KINDS.__contains__, f"must be one of {', '.join(KINDS)}")]
    description: Text
    requires: Texts
    build: Texts  # shell commands, cwd = folder
    run: Annotated[Text, AfterValidator(_words)]  # command template with {placeholders}
    artifacts: Texts  # paths relative to folder (absolute allowed)
    version: Text  # command printing the version
    ready: Annotated[Text, _must(READY_MODES.__contains__, f"must be one of {', '.join(READY_MODES)}")] = "listening"
    config: Text | None = None  # template file name in folder
    command: Text | None = None  # the program alone, taking every flag of SPEC §1 (cwd = folder)
    test: Texts = field(default_factory=list)  # the entry's own tests: shell commands, cwd = folder
    apt: Texts = field(default_factory=list)  # Debian packages its build, run and tests need
    # Commands (cwd = folder) that install a toolchain Debian lacks, run by scripts/deps after apt.
    install: Texts = field(default_factory=list)
    # Globs (in folder) of the JUnit XML reports its `test` commands write: arena check counts them.
    junit: Texts = field(default_factory=list)
    runtime: Texts = field(default_factory=list)  # what must be installed to run it beside the artifacts
    native: Flag = False  # machine code: its instructions per request are counted under callgrind
    # Seconds of load before any measurement, at least: the time its throughput takes to
    # settle (a JIT compiling the hot path). The bench, gate, sweep and latency warm it up
    # for the larger of this and their own warm-up.
    warmup_s: Seconds = 0
    # The floor of its mechanism (an entry of kind floor, e.g. floor-uring for io_uring): every
    # "of floor" ratio of this entry is divided by that floor's figure in the same mode.
    floor: Annotated[Text, _must(NAME_RE.match, "must name an entry, [a-z0-9-]+")] = DEFAULT_FLOOR
    # Its tier in the ranking: a peer's is "production" (what the language's users write with its
    # usual server) or "infrastructure" (a server run as it comes, configured); the other kinds'
    # is implied (ours: "tuned", floor: "floor") and filled in by load_manifest.
    tier: Annotated[Text, _must(PEER_TIERS.__contains__, f"must be one of {', '.join(PEER_TIERS)}")] | None = None
    # A production entry's tuned renard of the same language (an entry of kind ours): the
    # price of the idiom is this entry's CPU per request divided by that one's.
    tuned: Annotated[Text, _must(NAME_RE.match, "must name an entry, [a-z0-9-]+")] | None = None
    # Whether it answers requests pipelined in one write. false: its library drops the requests
    # read with the first (cpp-httplib 0.11), so `arena verify` draws its core route one request
    # per write, and only a tier measured in no pipelining mode (modes.TIER_MODES) may say so.
    pipelining: Flag = True
    folder: Path = field(init=False)
    manifest: Path = field(init=False)
    missing: list[str] = field(init=False, default_factory=list)  # required executables not on PATH

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


UNKNOWN_KEY = "unexpected_keyword_argument"  # pydantic's error for a key beyond the fields (extra="forbid")
KEYS = tuple(name for name in Entry.__dataclass_fields__ if name not in ("folder", "manifest", "missing"))


def _reason(error: dict) -> str:
    """One of pydantic's errors in a manifest's words (a type's own words found through `| None`)."""
    if error["type"] == UNKNOWN_KEY:
        return "unknown key"
    if error["type"] == "missing":
        return "missing key"
    if error["type"] == "value_error":  # a _must check or _words
        return str(error["ctx"]["error"])
    hint = get_type_hints(Entry, include_extras=True)[error["loc"][0]]
    return "must be " + next(
        m for t in (hint, *get_args(hint)) for m in getattr(t, "__metadata__", ()) if isinstance(m, str)
    )


def _entry(path: Path, index: int, table: object) -> Entry:
    where = f"entry[{index}]"
    if not isinstance(table, dict):
        raise ManifestError(path, where, "must be a table")
    try:
        entry = adapter(Entry).validate_python(table)
    except ValidationError as e:
        # the first error in the order the hand-written checks had: unknown keys, types, values, run's last
        first = min(
            e.errors(), key=lambda x: (x["type"] != UNKNOWN_KEY, x["type"] == "value_error", x["loc"][0] == "run")
        )
        raise ManifestError(path, f"{where}.{first['loc'][0]}", _reason(first)) from None
    if entry.kind == "ours" and entry.command is None:
        raise ManifestError(path, f"{where}.command", "missing key (an `ours` entry names its program)")
    if entry.native and entry.ready != "listening":  # callgrind starts it on port 0 (instructions.py)
        why = 'needs ready = "listening": callgrind starts it on port 0 and reads its port from that line'
        raise ManifestError(path, f"{where}.native", why)
    if entry.kind == "peer" and entry.tier is None:
        raise ManifestError(path, f"{where}.tier", f"missing key (a peer names its tier: {' or '.join(PEER_TIERS)})")
    if entry.kind != "peer" and entry.tier is not None:
        implied = f"kind {entry.kind} is {KIND_TIERS[entry.kind]}"
        raise ManifestError(path, f"{where}.tier", f"only a peer names its tier ({implied})")
    if entry.tuned is not None and entry.tier != "production":
        raise ManifestError(path, f"{where}.tuned", "only a production peer names a tuned renard")
    entry.tier = entry.tier or KIND_TIERS[entry.kind]
    pipelined_modes = [m.name for m in MODES.values() if m.pipelines and runs_in(entry.tier, m.name)]
    if not entry.pipelining and pipelined_modes:
        why = f"its tier ({entry.tier}) is measured in {', '.join(pipelined_modes)}, which pipelines"
        raise ManifestError(path, f"{where}.pipelining", f"false only for a tier measured in no pipelining mode: {why}")
    if entry.config is not None:
        template = path.parent / entry.config
        if not template.is_file():
            raise ManifestError(path, f"{where}.config", f"no such file {template}")
        for name in CONFIG_PLACEHOLDER_RE.findall(template.read_text()):
            if name not in PLACEHOLDERS:
                raise ManifestError(path, f"{where}.config", f"unknown placeholder {{{{{name}}}}} in {template.name}")
    entry.folder, entry.manifest = path.parent, path
    entry.missing = [exe for exe in entry.requires if shutil.which(exe) is None]
    return entry


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
    return [_entry(path, i, table) for i, table in enumerate(tables)]


def discover(repo: Path) -> list[Entry]:
    """Every entry under servers/ and peers/, ours first, each group sorted by folder.

    Raises ManifestError for the first broken manifest, a name declared twice, a `floor`
    that names no entry of kind floor (the default, "floor", need not exist: a tree without it
    simply has no floor to divide by), or a `tuned` that names no entry of kind ours."""
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
        if entry.tuned is not None and kinds.get(entry.tuned) != "ours":
            named = kinds.get(entry.tuned)
            why = "no entry of that name" if named is None else f"its kind is {named}, not ours"
            raise ManifestError(entry.manifest, f"{entry.name}.tuned", f"{entry.tuned!r} is not a tuned renard ({why})")
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
