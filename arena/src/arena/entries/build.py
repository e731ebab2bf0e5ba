"""Building an entry: its `build` commands, run by the shell in the entry's folder."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .logged import run_logged, tail
from .manifest import Entry, artifact_paths

BUILD_TIMEOUT_S = 1800  # one command; a build that hangs longer is reported as failed
SKIP_DIRS = {".git", "target", "build", "node_modules", "__pycache__", ".venv", "zig-cache", "zig-out", "dist"}


@dataclass
class BuildResult:
    entry: str
    ok: bool
    seconds: float
    log: Path  # the combined stdout+stderr of every command
    failed_command: str | None = None

    def tail(self, lines: int = 20) -> str:
        return tail(self.log, lines)


def _newest_source_mtime(folder: Path, artifacts: list[Path]) -> float:
    newest = 0.0
    stack = [folder]
    while stack:
        d = stack.pop()
        for p in d.iterdir():
            if p in artifacts:
                continue
            if p.is_dir() and not p.is_symlink():
                if p.name not in SKIP_DIRS:
                    stack.append(p)
            elif p.is_file():
                newest = max(newest, p.stat().st_mtime)
    return newest


def _artifact_mtime(path: Path) -> float:
    if path.is_dir():
        return max((p.stat().st_mtime for p in path.rglob("*") if p.is_file()), default=0.0)
    return path.stat().st_mtime


def needs_build(entry: Entry) -> bool:
    """True when the entry has build commands and an artifact inside its folder is missing or
    older than a source file of the folder. Artifacts outside the folder (installed programs)
    are not ours to rebuild."""
    if not entry.build:
        return False
    own = [p for p in artifact_paths(entry) if p.resolve().is_relative_to(entry.folder.resolve())]
    if any(not p.exists() for p in own):
        return True
    if not own:
        return False
    oldest = min(_artifact_mtime(p) for p in own)
    return _newest_source_mtime(entry.folder, own) > oldest


def build(entry: Entry, log_dir: Path | None = None) -> BuildResult:
    """Runs every build command in order; stops at the first that fails or times out."""
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="arena-build-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"build-{entry.name}.log"
    start = time.monotonic()
    failed = run_logged(entry.build, entry.folder, log, BUILD_TIMEOUT_S)
    if failed is not None:
        return BuildResult(entry.name, False, time.monotonic() - start, log, failed[0])
    return BuildResult(entry.name, True, time.monotonic() - start, log)
