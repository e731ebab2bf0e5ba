"""The files of a run: `results/<run-id>/run.json`, written atomically, and `results/latest`.

run.json history (model.py reads and checks it; bump SCHEMA_VERSION only when a field
changes meaning or type, and keep reading the older versions):
- schema 1 (2026-11): machine, config, entries, samples, failures.
  Added later, optional, absent in older runs: config.cpu_quota (share of one core the
  capped modes ran under, null: not capped) and config.cap_problem (why they could not
  run); samples of the modes keepalive-capped and close-capped; entry kind "floor";
  entries[].instructions (native entries: callgrind's instructions per request per mode,
  [{mode, requests, per_request, ir_small, ir_large, annotation?}]); entries[].warmup_s
  (the entry's own warm-up in seconds, entry.toml `warmup_s`, when it has one);
  failures[].log (the failed sample's server stderr tail, a file under logs/, relative to
  the run's directory; failures[].error is then its reason in one line, and failures are
  checked: entry, mode, rep, error); unfinished (why the run did not finish: interrupted,
  or the arena stopped while measuring; absent when it did); samples[].warmup_rps (the
  warm-up's 1 s windows, requests/s) and samples[].warmup_steady (true: it ended steady;
  false: at its bound; null: one run, not judged), absent when the warm-up was not windowed;
  samples[].warmup_cpu_us (the same windows' server CPU µs per request, on which steadiness
  was judged; absent in runs before it was recorded);
  entries[].floor (the floor entry its ratios are divided by, entry.toml `floor`; absent:
  the run's floor, which was then the only one); samples[].steal_share (stolen ÷ all CPU
  time of the server's and wrk's CPUs during the run, /proc/stat), samples[].load_1m (the
  1-minute load average at its end), samples[].steal_retry (the sample repeats one taken
  under steal above modes.STEAL_LIMIT: that one's steal_share) and samples[].cgroup_cpu_s
  (capped modes: the server's CPU seconds from its cgroup's counter, v1 cpuacct.usage or v2
  cpu.stat usage_usec, beside server_cpu_s from /proc), each absent when not recorded;
  samples[].took_s and samples[].warmup_took_s (wall seconds of the whole sample and of its
  warm-up) and timing (each phase's wall seconds and the plan's estimate, model.Timing),
  absent in runs before they were recorded;
  config.mix (the request mix wrk sent, mix.py; absent: default, every request GET /);
  entries[].url, .pid and .unknown (a running server measured by `arena bench --url`: its
  URL, its process or null, what the run could not know of it in words), whose samples may
  hold null in server_cpu_s, server_cpu_share, peak_rss_bytes and pss_bytes (no --pid);
  pairs ([{mode, entry, entry_rep, partner, partner_rep}]: the samples an extra round took
  back to back to narrow a paired ratio, bench.py; absent: none, and every ratio pairs the
  run's own rounds by repetition); samples[].cgroup_cpu_s in every mode (the server sits in
  an uncapped cgroup in the dedicated-core modes; before, capped modes only);
  samples[].tracked (true: netfilter tracked the sample's loopback connections; false: it did
  not, a raw-table NOTRACK rule for lo in place or no connection tracking loaded), absent
  when not recorded.
Beside run.json, distributions.jsonl holds each timed sample's latency histogram as it is
measured (distribution.py: {entry, mode, rep, unit, per_decade, count, buckets: [[b, n]],
percentiles_us}; added later), and results.csv one row per sample (report/csvfile.py,
rewritten with the reports).
Beside run.json, samples.jsonl holds each sample and failure as it was measured
({"sample": {...}} or {"failure": {...}}, one a line, added later): run.json is written
before the samples with `unfinished` set, and `arena report` adds what samples.jsonl holds
beyond it.
Beside run.json, `arena latency --run` and `arena sweep --run` write latency/latency.json
and sweep/sweep.json ({seconds, method, results | sweeps}; `method` added later), which the
run's report includes. `arena syscalls --run` writes syscalls/syscalls.json ({schema: 1,
method, config, entries: [{entry, kind, counts: [{mode, requests, per_request, calls, small,
large, extra_s, background, reconnects}], idle, idle_s, processes, threads, error}]}).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_dir(results: Path, now: dt.datetime) -> Path:
    """A fresh results/<run-id> directory; run-id is the UTC start time, suffixed if taken."""
    results.mkdir(parents=True, exist_ok=True)
    base = now.strftime("%Y%m%d-%H%M%S")
    for i in range(100):
        run_dir = results / (base if i == 0 else f"{base}-{i}")
        try:
            run_dir.mkdir()
            return run_dir
        except FileExistsError:
            continue
    raise FileExistsError(f"{results}/{base}: 100 runs with the same start second")


def write_json(path: Path, doc: dict) -> Path:
    """Writes doc to path atomically (a temporary file beside it, then rename); returns path."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)
    return path


def read_json(path: Path) -> object:
    """The JSON document at path; raises OSError or ValueError (json.JSONDecodeError)."""
    return json.loads(path.read_text())


def append_line(path: Path, doc: dict) -> None:
    """Appends doc to path as one JSON line and syncs it to the disk before returning."""
    with path.open("a") as f:
        f.write(json.dumps(doc) + "\n")
        f.flush()
        os.fsync(f.fileno())


def numbered_lines(path: Path) -> list[tuple[int, object]]:
    """(line number from 1, its JSON) for each JSON line of path; a line that does not parse
    (one cut short by a crash) is skipped."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            out.append((number, json.loads(line)))
        except ValueError:
            continue
    return out


def read_lines(path: Path) -> list[object]:
    """The JSON lines of path; a line that does not parse (one cut short by a crash) is skipped."""
    return [doc for _, doc in numbered_lines(path)]


def point_latest(results: Path, run_dir: Path) -> None:
    """results/latest -> <run-id> (relative symlink, replaced atomically)."""
    link = results / "latest"
    tmp = results / ".latest.tmp"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, link)
