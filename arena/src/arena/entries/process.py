"""Starting one entry: its `run` template rendered (entries.py), then handed to the runner's
launcher (renard_conformance.launcher), which starts, waits for, measures and stops it. And
running a load generator for its time, with the CPU it used (run_timed: wrk, h2load)."""

from __future__ import annotations

import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from renard_conformance import conformance
from renard_conformance.launcher import ServerProcess, StartError, free_port

from .manifest import Entry, render_config, render_run
from .outside import Outside

__all__ = ["Launch", "Server", "StartError", "free_port", "launch_ready", "listen_address", "start"]
__all__ += ["Timed", "TimedOut", "run_timed"]


def listen_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass
class Launch:
    """How to start an entry: the spec's flags, and optionally the CPUs to pin it to."""

    host: str = "127.0.0.1"
    port: int = 8080
    count: int = 21
    location: str = "https://avatar.example.org/Renard-{n}.png"
    threads: int = 1
    cpus: str | None = None  # taskset list, e.g. "0"; None: not pinned
    wrapper: tuple[str, ...] = ()  # a program the entry runs under, e.g. valgrind and its flags
    listen: str | None = None  # {listen} verbatim when not host:port (`arena stack`: unix:PATH, a TLS listen)


class Server:
    """A started entry: the launcher's process, the entry, how it was launched, its temp dir.
    A Handle (handle.py)."""

    def __init__(self, entry: Entry, launch: Launch, process: ServerProcess, tmp: Path):
        self.entry, self.launch, self.process, self.tmp = entry, launch, process, tmp

    @property
    def proc(self):
        """The subprocess.Popen of the entry."""
        return self.process.process

    @property
    def port(self) -> int:
        return self.process.port

    @property
    def started_at(self) -> float:
        """time.perf_counter() just before exec."""
        return self.process.started_at

    @property
    def ready_line(self) -> str | None:
        return self.process.ready_line

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Returns once the entry accepts connections; raises StartError (the entry stopped)."""
        try:
            self.process.wait_ready(timeout_s)
        except StartError as error:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise StartError(f"{error}{self._error_log()}") from None

    def output_tail(self, lines: int = 15) -> str:
        return self.process.output_tail(lines) + self._error_log(lines)

    def _error_log(self, lines: int = 15) -> str:
        """A peer's own log (nginx -e), if it writes one in its temp dir."""
        error_log = self.tmp / "error.log"
        if not error_log.is_file():
            return ""
        return "\n" + "\n".join(error_log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> int | None:
        """SIGTERM to the entry's process group, SIGKILL after the spec's 5 s (§7.6); removes
        its temp dir. Returns the exit status (None if it had to be killed)."""
        status = self.process.stop(group=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return status

    def tree_pids(self) -> list[int]:
        return self.process.tree_pids()

    def exited(self) -> str | None:
        status = self.proc.poll()
        return None if status is None else f"exited with status {status}"

    def answer_problem(self) -> str:
        """The conformance runner's check of one `GET /`: "" when it is a 302 to the template
        with k in 1..count, else what came back (an outside server: its --expect on its
        --path). Raises OSError when it cannot connect."""
        if isinstance(self.entry, Outside):
            return self.entry.answer_problem(self.launch.host, self.port)
        target = conformance.Target(self.launch.host, self.port, self.launch.count, self.launch.location)
        return conformance.check_redirect(target)

    def cpu_seconds(self) -> float:
        return self.process.cpu_seconds()

    def peak_rss_bytes(self) -> int:
        """Sum of VmHWM over the tree: each process's peak resident set since it started."""
        return self.process.peak_rss_kib() * 1024

    def pss_bytes(self) -> int:
        """Sum of Pss (smaps_rollup) over the tree: shared pages divided among their users."""
        return self.process.pss_kib() * 1024


def start(entry: Entry, launch: Launch, echo=None, inherit_stdout: bool = False) -> Server:
    """Execs the entry (in its own session, so that its group can be signalled) without waiting.

    echo: called with each stderr line as it arrives (for `arena run`)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"arena-{entry.name}-"))
    values = {
        "listen": launch.listen or listen_address(launch.host, launch.port),
        "host": launch.host,
        "port": str(launch.port),
        "count": str(launch.count),
        "location": launch.location,
        "threads": str(launch.threads),
        "tmp": str(tmp),
        "config": "",
    }
    if entry.config:
        config = tmp / Path(entry.config).name.removesuffix(".in")
        values["config"] = str(config)
        config.write_text(render_config(entry, values))
    argv = [*launch.wrapper, *render_run(entry, values)]
    if launch.cpus is not None:
        argv = ["taskset", "-c", launch.cpus] + argv
    process = ServerProcess(
        argv,
        cwd=entry.folder,
        ready=entry.ready,
        host=launch.host,
        port=launch.port,
        inherit_stdout=inherit_stdout,
        echo=echo,
        tail_lines=40,
        name=entry.name,
    )
    try:
        process.start()
    except StartError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Server(entry, launch, process, tmp)


def launch_ready(entry: Entry, launch: Launch, timeout_s: float = 30.0) -> Server:
    """start() then wait_ready(); on failure the server is stopped and StartError raised.
    Interrupted meanwhile (Ctrl-C, or SIGTERM made one by the arena), it is stopped too: the
    caller has no server yet to stop (a bench's server once outlived the bench)."""
    server = start(entry, launch)
    try:
        server.wait_ready(timeout_s)
    except BaseException:
        server.stop()
        raise
    return server


# --- a timed child: the load generator ------------------------------------------------------


class TimedOut(Exception):
    """A timed child that did not finish within its seconds and the grace: str() says so."""


@dataclass
class Timed:
    """What a timed child printed, how it ended, and what it cost."""

    stdout: str
    stderr: str
    returncode: int
    client_cpu_s: float  # its user + system CPU seconds (and those of its own children)
    wall_s: float  # seconds from its start to its end


def run_timed(argv: list[str], seconds: float, name: str = "", grace_s: float = 30.0) -> Timed:
    """Runs argv (a load generator told to run `seconds`) to its end, its output captured, no
    stdin; killed, and TimedOut raised naming it (name, else argv[0]), after seconds + grace_s.

    CPU = ru_utime + ru_stime of the children this process reaped meanwhile: the child alone,
    as long as no other child of this process (the server) ends during it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=seconds + grace_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise TimedOut(f"{name or Path(argv[0]).name} did not finish within {seconds + grace_s:g} s") from None
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    return Timed(out, err, p.returncode, cpu, wall)
