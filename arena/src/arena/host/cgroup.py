"""A CPU cap for one server: a cgroup of the cpu controller limiting its processes to a
share of one core (cgroup v2 `cpu.max`; v1 `cpu.cfs_quota_us` where v2 has no cpu
controller, as on hosts that mount the v1 hierarchies).

The capped modes use it so that the load generator has more CPU than the server and the
throughput measured is the server's (docs/arena/method.md). Creating one needs root, or a delegated
subtree; probe() says why not in plain words.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

PERIOD_US = 100_000  # the kernel's default CFS period (100 ms)


class CapError(Exception):
    """No cgroup can be made here; str() says why in plain words."""


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, filesystem type, options) of every cgroup mount."""
    out = []
    for line in Path("/proc/mounts").read_text().splitlines():
        _, point, fstype, options, *_ = line.split()
        if fstype in ("cgroup", "cgroup2"):
            out.append((point, fstype, options.split(",")))
    return out


def _hierarchy() -> tuple[Path, str]:
    """(the directory new cgroups go in, "v2" or "v1"); raises CapError."""
    mounts = _mounts()
    for point, fstype, _ in mounts:
        controllers = Path(point) / "cgroup.controllers"
        if fstype == "cgroup2" and controllers.is_file() and "cpu" in controllers.read_text().split():
            return Path(point), "v2"
    for point, fstype, options in mounts:
        if fstype == "cgroup" and "cpu" in options:
            return Path(point), "v1"
    raise CapError("no cgroup hierarchy with the cpu controller is mounted")


def _cpuacct_root() -> Path | None:
    """The v1 hierarchy with the cpuacct controller (cpuacct.usage), when one is mounted."""
    return next((Path(p) for p, fstype, options in _mounts() if fstype == "cgroup" and "cpuacct" in options), None)


@dataclass
class CpuCap:
    """A cgroup whose processes together get at most `quota` of one CPU, and the group that
    counts their CPU time: the same one on v2 (cpu.stat usage_usec) and where v1 mounts cpu
    and cpuacct together; a sibling under the cpuacct hierarchy where v1 mounts them apart
    (as this project's machines do); None where no cpuacct is mounted."""

    path: Path
    version: str  # "v1" or "v2"
    quota: float | None  # None: uncapped, a group that only counts (the dedicated-core modes)
    accounting: Path | None = None

    @classmethod
    def create(cls, quota: float | None, name: str = "arena") -> CpuCap:
        """Makes the cgroup, capped at quota of one core or (None) uncapped; raises CapError."""
        root, version = _hierarchy()
        path = root / f"{name}-{os.getpid()}-{time.monotonic_ns()}"
        quota_us = "max" if quota is None else str(max(1000, round(quota * PERIOD_US)))
        try:
            if version == "v2":
                subtree = root / "cgroup.subtree_control"
                if "cpu" not in subtree.read_text().split():
                    subtree.write_text("+cpu")
                path.mkdir()
                (path / "cpu.max").write_text(f"{quota_us} {PERIOD_US}")
            else:
                path.mkdir()
                (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (path / "cpu.cfs_quota_us").write_text("-1" if quota is None else quota_us)
        except OSError as e:
            if path.is_dir():
                path.rmdir()
            raise CapError(f"cannot create a {version} cgroup under {root}: {e.strerror or e}") from None
        cap = cls(path, version, quota)
        cap.accounting = cap._accounting_group(root)
        return cap

    def _accounting_group(self, root: Path) -> Path | None:
        """The group whose counter gives the CPU time of this cap's processes (see the class)."""
        if self.version == "v2" or (self.path / "cpuacct.usage").is_file():
            return self.path
        acct = _cpuacct_root()
        if acct is None:
            return None
        path = acct / self.path.name
        try:
            path.mkdir()
        except OSError:
            return None  # no counter: the /proc figure stands alone
        return path

    def usage_s(self) -> float | None:
        """CPU seconds the processes in the group have used since they joined it, at the
        kernel's nanosecond (v1 cpuacct.usage) or microsecond (v2 usage_usec) resolution; None
        when no counter can be read."""
        if self.accounting is None:
            return None
        try:
            if self.version == "v2":
                for line in (self.accounting / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) / 1e6
                return None
            return int((self.accounting / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError):
            return None

    def add(self, pids: list[int]) -> None:
        """Moves the processes (with all their threads) into the cgroup; raises CapError."""
        groups = [self.path] + ([self.accounting] if self.accounting not in (None, self.path) else [])
        for pid in pids:
            for group in groups:
                try:
                    (group / "cgroup.procs").write_text(str(pid))
                except ProcessLookupError:
                    break  # exited meanwhile
                except OSError as e:
                    raise CapError(f"cannot move process {pid} into {group}: {e.strerror or e}") from None

    def remove(self, timeout_s: float = 2.0) -> None:
        """Removes the cgroup (and its accounting sibling) once its processes are gone (waits
        up to timeout_s for them)."""
        deadline = time.monotonic() + timeout_s
        for group in [self.path] + ([self.accounting] if self.accounting not in (None, self.path) else []):
            while True:
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break  # left behind, empty soon; never worth failing a run for
                    time.sleep(0.02)


def probe(quota: float) -> str | None:
    """None when a cap can be made here, else why not."""
    try:
        CpuCap.create(quota, "arena-probe").remove()
    except CapError as e:
        return str(e)
    return None
