"""renard in Python: the story of `main`. Configuration (exit 2 on a bad command line),
one SO_REUSEPORT listener per worker on the same port (the first bind picks the port), the
`listening on` line, then worker 0 in this process and the others forked; SIGTERM to this
process reaches every worker (SPEC §7.6), and it exits 0 once they have drained."""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import signal
import socket
import sys
import time

from . import config as configuration
from .worker import SHUTDOWN_SIGNALS, LocalCounter, SharedCounter, Worker, new_loop


def main() -> None:
    try:
        config = configuration.parse(sys.argv[1:], os.environ, len(os.sched_getaffinity(0)))
    except configuration.ConfigError as error:
        print(error, file=sys.stderr)
        sys.exit(2)
    if config == "help":
        sys.stdout.write(configuration.USAGE)
        return
    if config == "version":
        print(f"renard {configuration.VERSION}")
        return
    # SIGTERM/SIGINT wait until each worker's loop handles them (Worker.run unblocks).
    signal.pthread_sigmask(signal.SIG_BLOCK, SHUTDOWN_SIGNALS)
    raise_descriptor_limit()
    listeners = bind_all(config)
    host, port = listeners[0].getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"listening on http://{shown}:{port}\n")
    sys.stderr.flush()

    counter = SharedCounter() if config.threads > 1 else LocalCounter()
    listening = SharedCounter() if config.threads > 1 else LocalCounter()  # open listeners
    listening.add(config.threads)
    if config.threads > 1:
        import ctypes  # noqa: F401  (loaded once, before the fork: die_with_parent)
    children = []
    for index in range(1, config.threads):
        pid = os.fork()
        if pid == 0:
            serve(config, listeners, index, counter, None, listening)
            os._exit(0)
        children.append(pid)

    def forward() -> None:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    worker = serve(config, listeners, 0, counter, forward, listening)
    reap(children, (worker.drain_ends or time.monotonic()) + 0.95)
    sys.exit(0)


def bind_all(config: configuration.Config) -> list[socket.socket]:
    """One listening socket per worker; exit 1 with one line if the address cannot be bound."""
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    listeners = []
    port = config.port
    for _ in range(config.threads):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((config.host, port))
            sock.listen(4096)
        except OSError as error:
            sys.stderr.write(f"renard: --listen: cannot bind {config.listen}: "
                             f"{error.strerror} (os error {error.errno})\n")
            sys.exit(1)
        sock.setblocking(False)
        port = sock.getsockname()[1]
        listeners.append(sock)
    return listeners


def serve(config, listeners, index, counter, on_shutdown, listening) -> Worker:
    """Run worker `index` on its listener (closing the others' copies, so that a closed
    listener refuses at once) until its drain ends."""
    for other, sock in enumerate(listeners):
        if other != index:
            sock.close()
    if on_shutdown is None:
        die_with_parent()
    loop = new_loop()
    worker = Worker(config, counter, on_shutdown, listening)
    gc.freeze()  # start-up objects are never collected: keep them out of every GC pass
    try:
        worker.run(listeners[index], loop)
    finally:
        loop.close()
    return worker


def reap(children: list[int], deadline: float) -> None:
    """Wait for the forked workers until `deadline` (monotonic), then kill what is left."""
    waiting = set(children)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                waiting.discard(pid)
        time.sleep(0.01)
    for pid in waiting:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def die_with_parent() -> None:
    """A forked worker gets SIGTERM (and drains) if the first process dies (Linux)."""
    import ctypes  # already loaded before the fork

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def raise_descriptor_limit() -> None:
    """Lift the soft descriptor limit to the hard one, so that --max-connections can be met."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


if __name__ == "__main__":
    main()
