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

from . import results
from .modes import DEFAULT_MODES, Mode, mode
from .sample import Sample
from .schema import INSTRUCTIONS_SCHEMA, PAIR_SCHEMA, RUN_SCHEMA, SCHEMA_VERSION, validate
from .schema import SchemaError as SchemaError  # re-exported: Run.read raises it

# Beside run.json: each sample and failure appended as it is measured ({"sample": …} or
# {"failure": …}, one a line), so that a run the arena did not finish can still be reported.
JOURNAL = "samples.jsonl"


# --------------------------------------------------------------------------- the run


@dataclass
class Verdicts:
    """The conformance runner's counts for one entry. sections, failures and core_route were
    added to schema 1 later; a run without them has the totals only."""

    passed: int
    alt: int
    failed: int
    sections: dict[str, dict[str, int]] = field(default_factory=dict)  # section -> pass/alt/fail
    failures: list[dict[str, str]] = field(default_factory=list)  # {section, name, detail}
    core_route: bool | None = None  # GET / answers a 302 to a uniform k; None: not recorded

    @classmethod
    def load(cls, d: dict) -> Verdicts:
        return cls(d["pass"], d["alt"], d["fail"], d.get("sections", {}), d.get("failures", []), d.get("core_route"))

    def to_json(self) -> dict:
        totals = {"pass": self.passed, "alt": self.alt, "fail": self.failed}
        if self.core_route is None:  # recorded as the run that wrote it did
            return totals
        return totals | {"sections": self.sections, "failures": self.failures, "core_route": self.core_route}


@dataclass
class InstructionCount:
    """User-space instructions per request of a native entry in one mode, counted by callgrind
    (instructions.py): (ir_large - ir_small) / (9 × requests). Added to schema 1 later."""

    mode: str
    requests: int  # N: the small run served N requests, the large one 10 N
    per_request: float
    ir_small: int  # callgrind's total Ir of the N run
    ir_large: int  # and of the 10 N run
    annotation: str | None = None  # callgrind_annotate's top functions, a file beside run.json

    @classmethod
    def load(cls, d: dict) -> InstructionCount:
        return cls(d["mode"], d["requests"], d["per_request"], d["ir_small"], d["ir_large"], d.get("annotation"))

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in INSTRUCTIONS_SCHEMA}
        if self.annotation is not None:
            d["annotation"] = self.annotation
        return d


@dataclass
class EntryRecord:
    """What the run knows of one entry: identity, availability and the per-entry figures."""

    name: str
    language: str
    kind: str
    available: bool
    reason: str | None = None  # why unavailable
    description: str | None = None
    version: str | None = None
    artifact_bytes: int | None = None
    runtime_bytes: int | None = None  # what it needs installed beside (added to schema 1 later)
    startup_ms: list[float] = field(default_factory=list)
    verify: Verdicts | None = None  # None: not verified
    instructions: list[InstructionCount] = field(default_factory=list)  # native entries; empty: not counted
    warmup_s: int | None = None  # its own warm-up (entry.toml), when it has one (added to schema 1 later)
    # The floor its ratios are divided by (entry.toml `floor`; added to schema 1 later). None, in
    # older runs: the run's first floor, which was then the only one.
    floor: str | None = None
    # A running server measured by URL (`arena bench --url`, remote.py; added to schema 1 later):
    # its URL, its process when --pid named it, and what the run could not know of it, in words.
    url: str | None = None
    pid: int | None = None
    unknown: list[str] = field(default_factory=list)

    @property
    def is_floor(self) -> bool:
        return self.kind == "floor"

    def drop(self, reason: str) -> None:
        """Marks the entry unusable for the rest of the run."""
        self.available, self.reason = False, reason

    @classmethod
    def load(cls, d: dict) -> EntryRecord:
        v = d["verify"]
        return cls(
            name=d["name"],
            language=d["language"],
            kind=d["kind"],
            available=d["available"],
            reason=d["reason"],
            description=d.get("description"),
            version=d["version"],
            artifact_bytes=d["artifact_bytes"],
            runtime_bytes=d.get("runtime_bytes"),
            startup_ms=list(d["startup_ms"]),
            verify=None if v is None else Verdicts.load(v),
            instructions=[InstructionCount.load(c) for c in d.get("instructions", [])],
            warmup_s=d.get("warmup_s"),
            floor=d.get("floor"),
            url=d.get("url"),
            pid=d.get("pid"),
            unknown=list(d.get("unknown", [])),
        )

    def to_json(self) -> dict:
        d = {
            "name": self.name,
            "language": self.language,
            "kind": self.kind,
            "description": self.description,
            "available": self.available,
            "reason": self.reason,
            "version": self.version,
            "artifact_bytes": self.artifact_bytes,
            "startup_ms": list(self.startup_ms),
            "verify": self.verify and self.verify.to_json(),
        }
        if self.runtime_bytes is not None:
            d["runtime_bytes"] = self.runtime_bytes
        if self.instructions:
            d["instructions"] = [c.to_json() for c in self.instructions]
        if self.warmup_s is not None:
            d["warmup_s"] = self.warmup_s
        if self.floor is not None:
            d["floor"] = self.floor
        if self.url is not None:
            d.update(url=self.url, pid=self.pid, unknown=list(self.unknown))
        return d


@dataclass
class Machine:
    cpu_model: str
    cores: int
    kernel: str
    os: str
    memory_bytes: int
    tools: dict[str, str]  # tool -> the version line it printed

    @classmethod
    def load(cls, d: dict) -> Machine:
        return cls(**{k: d[k] for k in RUN_SCHEMA["machine"]})

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in RUN_SCHEMA["machine"]}


@dataclass
class Config:
    """How the run was measured. cpu_quota and cap_problem were added to schema 1 later;
    a run without them was never capped."""

    server_cpus: str = "0"
    client_cpus: str = "1"
    duration_s: int = 10  # per measured repetition (wrk takes whole seconds)
    warmup_s: int = 2  # an unmeasured wrk run in the same mode just before; 0: none
    repetitions: int = 3
    modes: tuple[str, ...] = DEFAULT_MODES
    connections: int = 50
    reference: str = "nginx-lua"
    quick: bool = False
    cpu_quota: float | None = 0.5  # of one core, for the capped modes; None: not capped
    cap_problem: str | None = None  # why the capped modes could not run (they are left out)
    startup_runs: int = 3  # starts timed per entry; the median is the figure (not saved)
    mix: str = "default"  # the request mix wrk sent (mix.py; added to schema 1 later, absent: default)

    def seconds_per_sample(self, warmup_s: float | None = None) -> float:
        """warmup_s: an entry's own warm-up (load.warmup.warmup_s), when longer than the run's."""
        return self.duration_s + (self.warmup_s if warmup_s is None else warmup_s) + 0.5  # + start, checks, stop

    @classmethod
    def load(cls, d: dict) -> Config:
        return cls(
            **{k: d[k] for k in RUN_SCHEMA["config"] if k != "modes"},
            modes=tuple(d["modes"]),
            cpu_quota=d.get("cpu_quota"),
            cap_problem=d.get("cap_problem"),
            mix=d.get("mix", "default"),
        )

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in RUN_SCHEMA["config"]}
        d["modes"] = list(self.modes)
        d.update(cpu_quota=self.cpu_quota, cap_problem=self.cap_problem, mix=self.mix)
        return d


@dataclass
class Failure:
    """A sample that could not be measured: why, and where the server's stderr tail went."""

    entry: str
    mode: str
    rep: int
    error: str  # the reason; its first line is what the report shows (older runs kept the tail here)
    log: str | None = None  # the server's stderr tail, relative to the run's directory (added later)

    @property
    def reason(self) -> str:
        return self.error.splitlines()[0] if self.error else "no reason recorded"

    @classmethod
    def load(cls, d: dict) -> Failure:
        return cls(d["entry"], d["mode"], d["rep"], d["error"], d.get("log"))

    def to_json(self) -> dict:
        d = {"entry": self.entry, "mode": self.mode, "rep": self.rep, "error": self.error}
        if self.log is not None:
            d["log"] = self.log
        return d


@dataclass(frozen=True)
class Pair:
    """Two samples of one mode measured back to back in an extra round (bench.py grows a wide
    paired ratio with them): the entry's sample entry_rep, then its partner's (the reference,
    or its floor) partner_rep. The run's own rounds pair by repetition and are not listed."""

    mode: str
    entry: str
    entry_rep: int
    partner: str
    partner_rep: int

    @classmethod
    def load(cls, d: dict) -> Pair:
        return cls(**{k: d[k] for k in PAIR_SCHEMA})

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in PAIR_SCHEMA}


def journal_line(item: Sample | Failure) -> dict:
    """One line of the JOURNAL for a sample or a failure."""
    return {"sample": item.to_json()} if isinstance(item, Sample) else {"failure": item.to_json()}


@dataclass
class Run:
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
    unfinished: str | None = None
    pairs: list[Pair] = field(default_factory=list)  # the extra rounds' pairs (added later; absent: none)

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
    def load(cls, doc: dict) -> Run:
        """A run from its run.json object; raises SchemaError."""
        validate(doc)
        return cls(
            run_id=doc["run_id"],
            started=doc["started"],
            finished=doc["finished"],
            machine=Machine.load(doc["machine"]),
            config=Config.load(doc["config"]),
            entries=[EntryRecord.load(e) for e in doc["entries"]],
            samples=[Sample.load(s) for s in doc["samples"]],
            failures=[Failure.load(f) for f in doc.get("failures", [])],
            unfinished=doc.get("unfinished"),
            pairs=[Pair.load(p) for p in doc.get("pairs", [])],
        )

    def to_json(self) -> dict:
        return validate(
            {
                "schema": SCHEMA_VERSION,
                "run_id": self.run_id,
                "started": self.started,
                "finished": self.finished,
                "machine": self.machine.to_json(),
                "config": self.config.to_json(),
                "entries": [e.to_json() for e in self.entries],
                "samples": [s.to_json() for s in self.samples],
                "failures": [f.to_json() for f in self.failures],
            }
            | ({"unfinished": self.unfinished} if self.unfinished else {})
            | ({"pairs": [p.to_json() for p in self.pairs]} if self.pairs else {})
        )

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
