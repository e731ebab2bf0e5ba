"""A running server the arena did not start (`arena bench --url URL [--pid PID]`): an entry
that is measured, never started, built, verified or stopped.

wrk loads it in every chosen mode like an entry (interleaved with any ENTRIES named beside,
the same repetitions and statistics), with three things it cannot know said in the run
(EntryRecord.url, .pid) and in the report:
- it is the same process in every sample (an entry gets a fresh one per sample), so what a
  sample leaves behind (caches, a JIT's code, a grown heap) is there for the next;
- its start is not timed and it is not verified against the spec: before and after each
  sample one `GET` of the URL must answer `expect` (302 by default), nothing more;
- its CPU and memory: unknown, unless --pid names its process on this host; then CPU is
  utime + stime of that process and its descendants in /proc (as for an entry), peak RSS is
  their VmHWM (the peak since each started, not since the sample did), PSS is read after
  the sample. Capped modes need the server in a cgroup the arena makes: left out.
"""

from __future__ import annotations

import http.client
import ssl
from pathlib import Path
from urllib.parse import urlsplit

from renard_conformance.launcher import CLK_TCK, proc_cpu_ticks, proc_kib, process_tree

from .manifest import Entry
from .outside import CHECK_TIMEOUT_S, ad_hoc, get_problem

NAME = "url"  # the entry's name in the run and the report


class RemoteError(ValueError):
    """A --url or --pid that cannot be measured: str() names the problem."""


class Remote(Entry):
    """An Entry at a URL; `pid`: its process on this host, when known. A Handle (handle.py)."""

    url: str = ""
    pid: int | None = None
    expect: int = 302

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def port(self) -> int:
        parts = urlsplit(self.url)
        return parts.port or (443 if parts.scheme == "https" else 80)

    @property
    def target(self) -> str:
        """The request-target of the URL: its path and query."""
        parts = urlsplit(self.url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    def answer_problem(self) -> str:
        """ "" when GET of the URL answers expect, else what came back. Raises OSError when it cannot connect."""
        if urlsplit(self.url).scheme == "https":  # as wrk: the certificate is not checked
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            connection = http.client.HTTPSConnection(self.host, self.port, timeout=CHECK_TIMEOUT_S, context=context)
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=CHECK_TIMEOUT_S)
        return get_problem(connection, self.target, self.expect, self.url)

    # --- its process, when --pid names it ------------------------------------------------

    def tree_pids(self) -> list[int]:
        return process_tree(self.pid) if self.pid is not None and pid_alive(self.pid) else []

    def cpu_seconds(self) -> float | None:
        """utime + stime (and reaped children's) over the tree, seconds; None: no --pid."""
        if self.pid is None:
            return None
        return sum(proc_cpu_ticks(p) for p in self.tree_pids()) / CLK_TCK

    def peak_rss_bytes(self) -> int | None:
        """Sum of VmHWM over the tree (each process's peak since it started); None: no --pid."""
        return None if self.pid is None else 1024 * sum(proc_kib(p, "status", "VmHWM") for p in self.tree_pids())

    def pss_bytes(self) -> int | None:
        """Sum of Pss (smaps_rollup) over the tree; None: no --pid."""
        return None if self.pid is None else 1024 * sum(proc_kib(p, "smaps_rollup", "Pss") for p in self.tree_pids())

    def exited(self) -> str | None:
        """What ended its process (--pid), None while it runs or when no --pid names it."""
        return f"process {self.pid} (--pid) exited" if self.pid is not None and not pid_alive(self.pid) else None

    def unknowns(self) -> list[str]:
        """What the run cannot know of this server, in words (the report's note)."""
        said = [
            "not started by the arena: the same process in every sample, its start not timed",
            f"not verified against the spec (only: GET answers {self.expect})",
            "not capped (capped modes need a cgroup the arena makes)",
        ]
        if self.pid is None:
            said.append("CPU and memory unknown (no --pid)")
        else:
            said.append(f"CPU and memory of process {self.pid} and its descendants; peak RSS since they started")
        return said


def pid_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").is_file()


def remote_entry(url: str, pid: int | None = None, expect: int = 302) -> Remote:
    """The entry for a running server at url (http:// or https://); raises RemoteError."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise RemoteError(f"must start with http:// or https:// (got {url!r})")
    try:
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError as err:
        raise RemoteError(f"has a bad port: {err}") from None
    if not parts.hostname:
        raise RemoteError(f"has no host (got {url!r})")
    if parts.fragment:
        raise RemoteError("must not have a #fragment: it is never sent")
    if pid is not None and not pid_alive(pid):
        raise RemoteError(f"no process {pid} on this host (/proc/{pid} is missing)")
    where = f", process {pid}" if pid is not None else ", CPU and memory unknown"
    description = f"{url} (not started by the arena{where})"
    entry = ad_hoc(Remote, NAME, "running server", description, "", Path.cwd().resolve(), "--url")
    entry.url, entry.pid, entry.expect = url, pid, expect
    return entry
