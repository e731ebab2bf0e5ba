"""What a measurement asks of the server it loads, whoever started it: `Handle`, satisfied by
process.Server (an entry the arena started: `arena bench`'s entries and --cmd, sweep,
latency, the counts), remote.Remote (a running server at a URL: --url, --pid) and
stack/front.Running (nginx and the entry behind it). A measuring module takes a Handle
where it only reads these; starting and stopping stay with whoever started it."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Handle(Protocol):
    def tree_pids(self) -> list[int]:
        """Every live process of the server (empty: not known on this host)."""
        ...

    def cpu_seconds(self) -> float | None:
        """utime + stime (and reaped children's) over tree_pids, seconds; None: not known."""
        ...

    def peak_rss_bytes(self) -> int | None:
        """Σ VmHWM over tree_pids (each process's peak since it started); None: not known."""
        ...

    def exited(self) -> str | None:
        """What ended the server, a phrase whose verb is "exited" ("exited with status 3",
        "process 7 (--pid) exited"); None while it runs (or not known)."""
        ...

    def answer_problem(self) -> str:
        """ "" when one request answers as this server must, else what came back; raises
        OSError when it cannot connect."""
        ...
