"""`arena bench` as a story: build, describe, verify, time the starts, measure, write run.json."""

from __future__ import annotations

import shutil
from pathlib import Path

from . import results as resultsmod
from .bench import BenchConfig, Plan, WrkError, measure_sample, measure_startup, scripts_for
from .build import needs_build
from .entries import Entry, artifact_bytes
from .machine import describe, first_line
from .process import StartError
from .ui import bar, build_with_spinner, console, spinner
from .verify import load_runner, verify_entry


def _entry_record(e: Entry) -> dict:
    return {"name": e.name, "language": e.language, "kind": e.kind, "description": e.description,
            "available": e.available, "reason": e.reason, "version": None, "artifact_bytes": None,
            "startup_ms": [], "verify": None}


def _drop(record: dict, reason: str) -> None:
    """Marks an entry unusable for the rest of the run, with the reason in plain words."""
    record["available"] = False
    record["reason"] = reason
    console.print(f"[red]{record['name']}[/]: {reason}", highlight=False)


def run_bench(repo: Path, chosen: list[Entry], cfg: BenchConfig, results_dir: Path, verify: bool = True) -> Path:
    """Measures the chosen entries and writes results_dir/<run-id>/run.json; returns that directory."""
    started = resultsmod.utc_now()
    run_dir = resultsmod.new_run_dir(results_dir, started)
    log_dir = run_dir / "logs"
    records = {e.name: _entry_record(e) for e in chosen}
    failures: list[dict] = []
    for e in chosen:
        if not e.available:
            console.print(f"[yellow]unavailable[/] {e.name}: {e.reason}")

    with spinner() as p:
        p.add_task("describing the machine", total=None)
        machine = describe()

    # Build what needs it; a failing build drops that entry only.
    for e in [e for e in chosen if records[e.name]["available"] and needs_build(e)]:
        result = build_with_spinner(e, log_dir)
        if result.ok:
            console.print(f"built {e.name} in {result.seconds:.1f} s")
        else:
            _drop(records[e.name], f"build failed: `{result.failed_command}` (log {result.log})")
            console.print(result.tail(10), markup=False, highlight=False)

    live = [e for e in chosen if records[e.name]["available"]]
    for e in live:
        records[e.name]["version"] = first_line([e.version], cwd=e.folder, shell=True)
        records[e.name]["artifact_bytes"] = artifact_bytes(e)

    if verify:
        try:
            load_runner(repo)
        except ImportError as err:
            console.print(f"[red]the conformance runner cannot be imported ({err}): entries are not verified[/]")
            verify = False
    if verify:
        for e in live:
            with spinner() as p:
                p.add_task(f"verifying {e.name}" + (" (quick)" if cfg.quick else ""), total=None)
                v = verify_entry(repo, e, quick=cfg.quick)
            if v.error:
                _drop(records[e.name], f"verification could not run: {v.error.splitlines()[0]}")
            else:
                records[e.name]["verify"] = v.counts()
                c = v.counts()
                console.print(f"verified {e.name}: {c['pass']} pass, {c['alt']} alt, {c['fail']} fail")
    live = [e for e in live if records[e.name]["available"]]

    with bar() as p:
        task = p.add_task("startup: exec to first correct 302", total=len(live) * cfg.startup_runs)
        for e in live:
            try:
                records[e.name]["startup_ms"] = measure_startup(e, cfg)
            except StartError as err:
                _drop(records[e.name], f"does not start: {str(err).splitlines()[0]}")
            p.advance(task, cfg.startup_runs)
    live = [e for e in live if records[e.name]["available"]]

    plan = Plan(live, cfg)
    samples: list[dict] = []
    console.print(f"measuring {len(live)} entries × {len(cfg.modes)} modes × {cfg.repetitions} repetitions, "
                  f"{cfg.warmup_s} s warm-up + {cfg.duration_s} s each: about {plan.seconds() / 60:.1f} min; "
                  f"server on CPU {cfg.server_cpus}, wrk on CPU {cfg.client_cpus}")
    scripts = scripts_for(cfg)
    try:
        with bar() as p:
            task = p.add_task("bench", total=len(plan.steps))
            for rep, mode, e in plan.steps:
                p.update(task, description=f"rep {rep + 1}/{cfg.repetitions} {mode:<10} {e.name:<14}")
                try:
                    samples.append(measure_sample(e, mode, rep, cfg, scripts))
                except (StartError, WrkError) as err:
                    failures.append({"entry": e.name, "mode": mode, "rep": rep, "error": str(err)})
                    p.console.print(f"[red]{e.name} {mode} rep {rep}[/]: {str(err).splitlines()[0]}", highlight=False)
                p.advance(task)
    finally:
        shutil.rmtree(next(iter(scripts.values())).parent, ignore_errors=True)

    run = {
        "schema": resultsmod.SCHEMA_VERSION,
        "run_id": run_dir.name,
        "started": resultsmod.iso(started),
        "finished": resultsmod.iso(resultsmod.utc_now()),
        "machine": machine,
        "config": cfg.as_json(),
        "entries": list(records.values()),
        "samples": samples,
        "failures": failures,
    }
    resultsmod.write_run(run_dir, run)
    resultsmod.point_latest(results_dir, run_dir)
    return run_dir
