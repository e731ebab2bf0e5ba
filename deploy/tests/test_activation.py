"""renard.socket and renard.service as systemd runs them, without a booted systemd: the
socket is made and held here as the .socket unit makes and holds it, and each start goes
through systemd-socket-activate, which hands it to renard as fd 3 (LISTEN_FDS, LISTEN_PID).
On ONE instance behind nginx, a restart under load fails no request, because the kernel
keeps queueing connections on the held socket while renard stops and starts; and renard
speaks Type=notify's protocol: READY=1, RELOADING=1 + READY=1 around SIGHUP, STOPPING=1."""

import signal
import time

import pytest

from load import Load
from stack import Stack

LOAD_S = 5.0  # the whole load (each client is also bounded in count: load.MAX_REQUESTS)
RESTARTS = 2


@pytest.fixture
def activated(renard, tmp_path):
    with Stack(renard, tmp_path, upstream="activated") as s:
        yield s


def test_restarts_of_the_only_instance_under_load_fail_no_request(activated, chi_square):
    with Load(activated) as load:
        for _ in range(RESTARTS):
            time.sleep(LOAD_S / (RESTARTS + 1))
            assert activated.stop_instance(0, signal.SIGTERM) == 0  # drained (SPEC §7.6)
            activated.start_instance(0)  # as `systemctl restart renard`: the socket stayed open
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
