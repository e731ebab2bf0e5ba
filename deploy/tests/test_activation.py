"""renard.socket and renard.service as systemd runs them, without a booted systemd: the
socket is made and held here as the .socket unit makes and holds it, and each start goes
through systemd-socket-activate, which hands it to renard as fd 3 (LISTEN_FDS, LISTEN_PID).
On ONE instance behind nginx, a restart under load fails no request, because the kernel
keeps queueing connections on the held socket while renard stops and starts; and renard
speaks Type=notify's protocol: READY=1, RELOADING=1 + READY=1 around SIGHUP, STOPPING=1."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from load import Load
from stack import Notifications, Stack, held_unix_socket

DEPLOY = Path(__file__).resolve().parents[1]
LOAD_S = 5.0  # the whole load (each client is also bounded in count: load.MAX_REQUESTS)
RESTARTS = 2


@pytest.fixture
def activated(renard, tmp_path):
    with Stack(renard, tmp_path, upstream="activated") as s:
        yield s


def test_restarts_of_the_only_instance_under_load_fail_no_request(activated, chi_square):
    # renard runs as the unit runs it, under SCHED_BATCH (CPUSchedulingPolicy=batch): its
    # wake-ups wait for nginx's turn to end, and no request may be lost to that either.
    assert os.sched_getscheduler(activated.instances[0].pid) == os.SCHED_BATCH
    with Load(activated) as load:
        for _ in range(RESTARTS):
            time.sleep(LOAD_S / (RESTARTS + 1))
            assert activated.stop_instance(0, signal.SIGTERM) == 0  # drained (SPEC §7.6)
            activated.start_instance(0)  # as `systemctl restart renard`: the socket stayed open
            assert os.sched_getscheduler(activated.instances[0].pid) == os.SCHED_BATCH
        time.sleep(LOAD_S / (RESTARTS + 1))
    ks = load.ks()
    total = sum(ks.values())
    failures = load.failures
    assert failures == [], f"{len(failures)} of {total + len(failures)} requests failed: {failures[:5]}"
    assert total >= 500, f"only {total} answers in {LOAD_S} s"
    _, _, p = chi_square([ks[k] for k in range(1, 22)], [total / 21] * 21)
    assert p > 1e-4, f"k is not uniform (p = {p:.2g}): {sorted(ks.items())}"


def test_the_same_restart_without_the_held_socket_fails_requests(renard, tmp_path):
    # The control: renard listening on its own Unix socket (--listen unix:…) goes away with
    # the process, and nginx, with one instance, has nowhere else to send visitors.
    with Stack(renard, tmp_path, upstream="unix") as stack, Load(stack) as load:
        time.sleep(0.5)
        assert stack.stop_instance(0, signal.SIGTERM) == 0
        time.sleep(0.5)
        stack.start_instance(0)
        time.sleep(0.5)
    assert any(f.startswith("502 ") for f in load.failures), load.failures[:5]


def test_renard_notifies_ready_reloading_and_stopping(activated):
    notify, proc = activated.notify[0], activated.instances[0]  # READY=1 came at the start
    proc.send_signal(signal.SIGHUP)
    seen = notify.expect("READY=1")
    assert "RELOADING=1" in seen and seen.index("RELOADING=1") < len(seen) - 1, seen
    proc.send_signal(signal.SIGTERM)
    notify.expect("STOPPING=1")
    assert proc.wait(timeout=10) == 0
    activated.instances[0] = None


def allowed_system_calls(groups: list[str]) -> set[str]:
    """The system calls that SystemCallFilter= groups (e.g. @system-service) allow, expanded
    with systemd's own table (systemd-analyze syscall-filter)."""
    listing = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, check=True)
    table: dict[str, list[str]] = {}
    for line in listing.stdout.splitlines():
        if line.startswith("@"):
            members = table.setdefault(line.strip(), [])
        elif line.strip() and not line.strip().startswith("#"):
            members.append(line.strip())

    def expand(name: str) -> set[str]:
        return set().union(*(expand(n) for n in table[name])) if name.startswith("@") else {name}

    return set().union(*(expand(g) for g in groups))


def ask(path: Path, target: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n".encode())
        return s.recv(4096)


def test_every_system_call_renard_makes_passes_the_units_filters(renard, tmp_path):
    # Under systemd, a call outside SystemCallFilter= kills renard (SIGSYS) and a socket()
    # outside RestrictAddressFamilies= fails. strace lists what renard calls, started as the
    # unit starts it (socket activation, NOTIFY_SOCKET, --config), then serving, reloading
    # and draining; every call must pass the unit's filters, and no memory may be mapped
    # writable and executable at once (MemoryDenyWriteExecute=).
    service = (DEPLOY / "renard.service").read_text()
    filters = re.findall(r"^SystemCallFilter=(.*)$", service, re.M)
    # One allow-list, then deny-lists (~) that take calls out of it: what this test expands.
    allow = [f for f in filters if not f.startswith("~")]
    deny = [g for f in filters if f.startswith("~") for g in f[1:].split()]
    assert allow == ["@system-service"], filters
    families = set(re.search(r"^RestrictAddressFamilies=(.*)$", service, re.M)[1].split())
    images = tmp_path / "images"
    images.mkdir()
    for k in (1, 2):
        (images / f"Renard-{k}.png").write_bytes(b"")
    config = tmp_path / "renard.conf"
    config.write_text(f"RENARD_COUNT_FROM={images}\nRENARD_LOCATION=https://a.test/Renard-{{n}}.png\n")
    path, trace = tmp_path / "renard.sock", tmp_path / "strace"
    held, notify = held_unix_socket(path), Notifications(tmp_path / "notify")
    argv = [str(renard), "--config", str(config), "--metrics", "--threads", "2"]
    # strace's child takes LISTEN_PID = its own pid, then becomes renard (the same pid).
    traced = ["strace", "-f", "-qq", "-o", str(trace), "sh", "-c", 'LISTEN_PID=$$ exec "$@"', "sh", *argv]
    at_fd_3 = "import os, sys; os.dup2(int(sys.argv[1]), 3); os.execvp(sys.argv[2], sys.argv[2:])"
    env = {"PATH": os.environ["PATH"], "LISTEN_FDS": "1", "NOTIFY_SOCKET": str(notify.path)}
    strace = subprocess.Popen(
        [sys.executable, "-c", at_fd_3, str(held.fileno()), *traced], pass_fds=(held.fileno(),), env=env
    )
    try:
        notify.expect("READY=1", timeout_s=30)
        (pid,) = map(int, Path(f"/proc/{strace.pid}/task/{strace.pid}/children").read_text().split())
        for target, status in [("/", 302), ("/?seed=a", 302), ("/healthz", 200), ("/metrics", 200), ("/x", 404)]:
            assert ask(path, target).startswith(f"HTTP/1.1 {status} ".encode())
        (images / "Renard-3.png").write_bytes(b"")
        os.kill(pid, signal.SIGHUP)
        notify.expect("READY=1")
        assert b"/Renard-3.png" in b"".join(ask(path, f"/?seed={i}") for i in range(60))  # missed: (2/3)^60
        os.kill(pid, signal.SIGTERM)
        notify.expect("STOPPING=1")
        assert strace.wait(timeout=30) == 0
    finally:
        if strace.poll() is None:
            strace.kill()
            strace.wait()
        held.close()
        notify.close()
    calls: set[str] = set()
    used_families: set[str] = set()
    writable_code: list[str] = []
    lines = trace.read_text().splitlines()
    (start,) = [i for i, line in enumerate(lines) if re.match(rf'\d+ +execve\("{re.escape(str(renard))}"', line)]
    for line in lines[start + 1 :]:  # what sh did before it became renard is not renard's
        match = re.match(r"\d+ +(?:<\.\.\. (\w+) resumed>|(\w+)\()", line)
        if match:
            calls.add(match.group(1) or match.group(2))
        if family := re.search(r" socket\((AF_\w+)", line):
            used_families.add(family.group(1))
        if re.search(r" (mmap|mprotect)\(", line) and "PROT_WRITE" in line and "PROT_EXEC" in line:
            writable_code.append(line)  # MemoryDenyWriteExecute= refuses these
    assert calls, "strace saw no system call of renard's"
    assert calls - (allowed_system_calls(allow) - allowed_system_calls(deny)) == set()
    assert used_families - families == set(), used_families
    assert "MemoryDenyWriteExecute=yes" in service.split("\n") and writable_code == []
