"""The flagship on a loopback port of its own choosing, for the tests that talk to one renard
without nginx (--metrics, SIGHUP, --check)."""

import contextlib
import select
import subprocess

READY_S = 10.0  # the SPEC §1 `listening on` line comes within this


@contextlib.contextmanager
def running_renard(renard, *flags):
    """renard with `--listen 127.0.0.1:0` and `flags`: yields (process, port) once it prints
    its `listening on` line (SPEC §1); its stderr stays readable (text) after that line. On
    exit: SIGTERM, and the exit status must be 0 (SPEC §7.6)."""
    proc = subprocess.Popen(
        [str(renard), "--listen", "127.0.0.1:0", *flags],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stderr], [], [], READY_S)
        line = proc.stderr.readline() if ready else ""
        assert line.startswith("listening on http://127.0.0.1:"), f"first stderr line: {line!r}"
        yield proc, int(line.rsplit(":", 1)[1])
    finally:
        proc.terminate()
        status = proc.wait(timeout=10)
    assert status == 0, f"exit status {status} after SIGTERM"
