"""The typed model of a run: what `arena bench` measures and `arena report` reads.

A Run holds the machine, the configuration, one EntryRecord per entry and one Sample per
(entry, mode, repetition; sample.py). Each class loads itself from its run.json object (after
the schema check of schema.py) and saves itself back to one; the rest of the arena reads runs
through these classes only. results.py reads and writes the files; modes.py declares the modes
and kinds; what a valid run.json is, in schema.py (Run.load and Run.to_json check it;
SchemaError and validate are re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict from Python 3.12 only

from . import results
from .modes import DEFAULT_MODES, Mode, mode, tier_of
from .sample import Sample
from .schema import LAX, NOT_SAVED, OMIT_EMPTY, OMIT_NONE, Declared, Num, SchemaError, required

SCHEMA_VERSION = 1

# Beside run.json: each sample and failure appended as it is measured ({"sample": …} or
# {"failure": …}, one a line), so that a run the arena did not finish can still be reported.
JOURNAL = "samples.jsonl"


# --------------------------------------------------------------------------- the run


class VerdictFailure(TypedDict):
    section: str
    name: str
    detail: str


@dataclass
class Verdicts:
    """The conformance runner's counts for one entry. sections, failures and core_route were
    added to schema 1 later; a run without them has the totals only."""

    passed: Annotated[int, Field(alias="pass")]
    alt: int
    failed: Annotated[int, Field(alias="fail")]
    sections: dict[str, dict[str, int]] = field(default_factory=dict)  # section -> pass/alt/fail
    failures: list[VerdictFailure] = field(default_factory=list)
    core_route: bool | None = None  # GET / answers a 302 to a uniform k; None: not recorded

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict:
        """The totals only when core_route is None (as the run that wrote it did)."""
        d = handler(self)
        return {k: d[k] for k in ("pass", "alt", "fail")} if self.core_route is None else d


@dataclass
class InstructionCount:
    """User-space instructions per request of a native entry in one mode, counted by callgrind
    (instructions.py): (ir_large - ir_small) / (9 × requests). Added to schema 1 later."""

    mode: str
    requests: int  # N: the small run served N requests, the large one 10 N
    per_request: Num
    ir_small: int  # callgrind's total Ir of the N run
    ir_large: int  # and of the 10 N run
    annotation: Annotated[str | None, OMIT_NONE] = None  # callgrind_annotate's top functions, a file beside run.json


@dataclass
class EntryRecord:
    """What the run knows of one entry: identity, availability and the per-entry figures."""

    name: str
    language: str
    kind: str
    description: str | None = field(default=None, kw_only=True)  # written here, read when present
    available: bool
    reason: str | None = None  # why unavailable
    version: str | None = None
    artifact_bytes: int | None = None
    startup_ms: list[Num] = field(default_factory=list)
    verify: Verdicts | None = None  # None: not verified
    runtime_bytes: Annotated[int | None, OMIT_NONE] = None  # what it needs installed beside (added later)
    instructions: Annotated[list[InstructionCount], OMIT_EMPTY] = field(default_factory=list)  # empty: not counted
    warmup_s: Annotated[int | None, OMIT_NONE] = None  # its own warm-up (entry.toml), when it has one (added later)
    # The floor its ratios are divided by (entry.toml `floor`; added to schema 1 later). None, in
    # older runs: the run's first floor, which was then the only one.
    floor: Annotated[str | None, OMIT_NONE] = None
    # A running server measured by URL (`arena bench --url`, remote.py; added to schema 1 later):
    # its URL, its process when --pid named it, and what the run could not know of it, in words.
    url: str | None = None
    pid: int | None = None
    unknown: list[str] = field(default_factory=list)
    # Its tier (entry.toml `tier`, or its kind's; added to schema 1 later: absent, its kind's) and,
    # for a production peer, the tuned renard the price of the idiom divides by.
    tier: Annotated[str | None, OMIT_NONE] = None
    tuned: Annotated[str | None, OMIT_NONE] = None

    @property
    def is_floor(self) -> bool:
        return self.kind == "floor"

    @property
    def tier_name(self) -> str:
        """Its tier in the ranking (modes.TIERS); a peer of a run recorded before tiers: "peer"."""
        return tier_of(self.kind, self.tier)

    def drop(self, reason: str) -> None:
        """Marks the entry unusable for the rest of the run."""
        self.available, self.reason = False, reason

    _in_file = required("reason", "version", "artifact_bytes", "startup_ms", "verify")

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict:
        """url, pid and unknown together, for a server measured by URL only."""
        d = handler(self)
        return d if self.url is not None else {k: v for k, v in d.items() if k not in ("url", "pid", "unknown")}


@dataclass
class Machine:
    cpu_model: str
    cores: int
    kernel: str
    os: str
    memory_bytes: int
    tools: dict[str, str]  # tool -> the version line it printed


@dataclass
class Config:
    """How the run was measured. cpu_quota and cap_problem were added to schema 1 later;
    a run without them was never capped."""

    server_cpus: str = "0"
    client_cpus: str = "1"
    duration_s: Num = 10  # per measured repetition (wrk takes whole seconds)
    warmup_s: Num = 2  # an unmeasured wrk run in the same mode just before; 0: none
    repetitions: int = 3
    modes: Annotated[tuple[str, ...], LAX] = DEFAULT_MODES
    connections: int = 50
    reference: str = "nginx-lua"
    quick: bool = False
    cpu_quota: Num | None = 0.5  # of one core, for the capped modes; None: not capped (absent in run.json: None)
    cap_problem: str | None = None  # why the capped modes could not run (they are left out)
    startup_runs: Annotated[int, NOT_SAVED] = 3  # starts timed per entry; the median is the figure
    mix: str = "default"  # the request mix wrk sent (mix.py; added to schema 1 later, absent: default)


@dataclass
class Failure(Declared):
    """A sample that could not be measured: why, and where the server's stderr tail went."""

    entry: str
    mode: str
    rep: int
    error: str  # the reason; its first line is what the report shows (older runs kept the tail here)
    log: Annotated[str | None, OMIT_NONE] = None  # the server's stderr tail, relative to the run's directory

    @property
    def reason(self) -> str:
        return self.error.splitlines()[0] if self.error else "no reason recorded"


@dataclass(frozen=True)
class Pair(Declared):
    """Two samples of one mode measured back to back in an extra round (bench.py grows a wide
    paired ratio with them): the entry's sample entry_rep, then its partner's (the reference,
    or its floor) partner_rep. The run's own rounds pair by repetition and are not listed."""

    mode: str
    entry: str
    entry_rep: int
    partner: str
    partner_rep: int


@dataclass
class Timing(Declared):
    """Where a bench's time went (workflows/bench.py), in wall seconds, beside what its plan
    said (bench/plan.py): the stages in the order they ran, then the samples' parts (their
    sum is samples_s + pairs_s less the time between samples)."""

    planned_s: Num  # the plan's estimate, builds not counted
    took_s: Num  # from the plan's print to the end of the instruction counts, builds included
    builds_s: Num = 0
    verify_s: Num = 0
    starts_s: Num = 0
    samples_s: Num = 0  # the plan's samples, waits for conntrack room included
    pairs_s: Num = 0  # the extra rounds
    instructions_s: Num = 0
    sampled: int = 0  # samples measured or failed, extra rounds included
    load_s: Num = 0  # the kept load runs (wall_s)
    warmup_s: Num = 0  # the warm-ups (warmup_took_s)
    steal_repeats: int = 0  # load runs repeated for steal (their time is in overhead_s)
    steal_kept: int = 0  # samples stolen from and kept unrepeated, the repeats' budget spent (plan.may_repeat)
    conntrack_wait_s: Num = 0  # waits for room in the conntrack table
    overhead_s: Num = 0  # the rest of each sample: start, checks, stop, a steal repeat's load run

    def phases(self) -> list[tuple[str, float]]:
        """(what, seconds) of each stage, for the console."""
        names = ("builds", "verification", "starts", "samples", "extra pairs", "instruction counts")
        spent = (self.builds_s, self.verify_s, self.starts_s, self.samples_s, self.pairs_s, self.instructions_s)
        return list(zip(names, spent, strict=True))


def journal_line(item: Sample | Failure) -> dict:
    """One line of the JOURNAL for a sample or a failure."""
    return {"sample": item.to_json()} if isinstance(item, Sample) else {"failure": item.to_json()}


@dataclass
class Run(Declared):
    """run.json, the format declared here (results.py tells its history): Run.load checks it."""

    schema: Literal[1] = field(default=SCHEMA_VERSION, kw_only=True)  # required in a file (Run.load)
    run_id: str
    started: str  # ISO 8601 UTC, e.g. 2026-11-22T00:15:00Z
    finished: str
    machine: Machine
    config: Config
    entries: list[EntryRecord]
    samples: list[Sample]
    failures: list[Failure] = field(default_factory=list)
    # Why the run did not finish (interrupted, or the arena stopped while measuring: then
    # run.json is the one written before the samples and the JOURNAL holds them); None: it did.
    unfinished: Annotated[str | None, OMIT_EMPTY] = None
    pairs: Annotated[list[Pair], OMIT_EMPTY] = field(default_factory=list)  # the extra rounds' (absent: none)
    timing: Annotated[Timing | None, OMIT_NONE] = None  # where the bench's time went (absent: not recorded)

    def entry(self, name: str) -> EntryRecord | None:
        return next((e for e in self.entries if e.name == name), None)

    @property
    def modes(self) -> list[Mode]:
        return [mode(name) for name in self.config.modes]

    @property
    def floor(self) -> EntryRecord | None:
        """The default floor of this run (the one named "floor", else the first), when one was measured."""
        floors = [e for e in self.entries if e.is_floor and e.available]
        return next((e for e in floors if e.name == "floor"), floors[0] if floors else None)

    def floor_of(self, entry: EntryRecord) -> EntryRecord | None:
        """The floor that entry's ratios are divided by: the one it names (entry.toml `floor`) when the
        run measured it, else None (never another floor in its place); a run written before
        entries named their floor: its default floor. A floor is its own."""
        if entry.is_floor:
            return entry
        if entry.floor is None:
            return self.floor
        return next((e for e in self.entries if e.name == entry.floor and e.is_floor and e.available), None)

    @classmethod
    def load(cls, doc: object) -> Run:
        """A run from its run.json object; raises SchemaError. A config without cpu_quota (a run
        written before the cap) was not capped."""
        if isinstance(doc, dict) and isinstance(doc.get("config"), dict):
            doc = doc | {"config": {"cpu_quota": None} | doc["config"]}
        if isinstance(doc, dict) and doc.get("schema") != SCHEMA_VERSION:
            raise SchemaError(f"schema: must be {SCHEMA_VERSION}, got {doc.get('schema')!r}")
        return _consistent(super().load(doc))

    def to_json(self) -> dict:
        """Raises SchemaError rather than give a document Run.load would refuse."""
        doc = super().to_json()
        Run.load(doc)
        return doc

    @classmethod
    def read(cls, path: Path) -> Run:
        """A run.json, a run directory or results/latest; raises SchemaError, OSError, ValueError.

        An unfinished run also takes the samples and failures of its JOURNAL that run.json
        does not hold (the arena stopped before writing them there)."""
        run_json = path / "run.json" if path.is_dir() else path
        doc = results.read_json(run_json)
        journal = run_json.parent / JOURNAL
        if isinstance(doc, dict) and doc.get("unfinished") and journal.is_file():
            have = {(x["entry"], x["mode"], x["rep"]) for key in ("samples", "failures") for x in doc.get(key, [])}
            for line in results.read_lines(journal):
                for key, kind in (("sample", "samples"), ("failure", "failures")):
                    item = line.get(key) if isinstance(line, dict) else None
                    if isinstance(item, dict) and (item.get("entry"), item.get("mode"), item.get("rep")) not in have:
                        doc.setdefault(kind, []).append(item)
        return cls.load(doc)

    def write(self, run_dir: Path) -> Path:
        """Validates and writes run_dir/run.json atomically; returns its path."""
        return results.write_json(run_dir / "run.json", self.to_json())


def _consistent(run: Run) -> Run:
    """run, when what its keys name exists (samples and pairs name its entries and modes) and
    its quota is one; raises SchemaError."""
    names = {e.name for e in run.entries}
    for i, s in enumerate(run.samples):
        if s.entry not in names:
            raise SchemaError(f"samples[{i}].entry: {s.entry!r} is not in entries")
        if s.mode not in run.config.modes:
            raise SchemaError(f"samples[{i}].mode: {s.mode!r} is not in config.modes")
    for i, pair in enumerate(run.pairs):
        for key in ("entry", "partner"):
            if getattr(pair, key) not in names:
                raise SchemaError(f"pairs[{i}].{key}: {getattr(pair, key)!r} is not in entries")
    quota = run.config.cpu_quota
    if quota is not None and not 0 < quota <= 1:
        raise SchemaError(f"config.cpu_quota: must be a number in (0, 1] or null, got {quota!r}")
    return run


def validate(doc: object) -> dict:
    """doc unchanged when it is a valid run.json object; raises SchemaError."""
    Run.load(doc)
    return doc  # type: ignore[return-value]
