"""SIGHUP (SPEC §8) on the real binary: images added to the --count-from folder appear, a
--config file is read again, a bad one changes nothing and prints one line, and a
keep-alive connection opened before the reload is served after it."""

import contextlib
import re
import select
import signal
import time

import pytest

from http_client import Client
from renard_process import running_renard

DRAWS = 300  # P(one of 6 values never drawn) = 6 * (5/6)^300, about 1e-23


@pytest.fixture
def running(renard):
    """Starts renard (two threads) with the given flags: (process, port); each one is stopped,
    exit status 0, at the end of the test."""
    with contextlib.ExitStack() as stack:
        yield lambda *flags: stack.enter_context(running_renard(renard, "--threads", "2", *flags))


def locations(client, n=DRAWS):
    """The Location values of n unseeded `GET /` on `client`."""
    seen = set()
    for _ in range(n):
        answer = client.get("/")
        assert answer.status == 302
        seen.add(answer.headers["location"])
    return seen


def ks(client, n=DRAWS):
    return {
        int(re.fullmatch(r"https://avatar\.example\.org/Renard-(\d+)\.png", loc)[1]) for loc in locations(client, n)
    }


def images(folder, first, last):
    for k in range(first, last + 1):
        (folder / f"Renard-{k}.png").write_bytes(b"")


def stderr_line(proc, timeout_s=5.0):
    ready, _, _ = select.select([proc.stderr], [], [], timeout_s)
    return proc.stderr.readline() if ready else ""


def until(condition, timeout_s=5.0):
    """Poll `condition` until it holds (the reload runs beside the event loops)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_images_added_to_the_folder_appear_after_sighup(running, tmp_path):
    images(tmp_path, 1, 3)
    proc, port = running("--count-from", str(tmp_path))
    kept = Client(port)  # a keep-alive connection opened before the reload
    assert ks(kept) == {1, 2, 3}
    socket_before = kept.conn.sock
    images(tmp_path, 4, 6)
    assert ks(kept, 50) <= {1, 2, 3}  # nothing changes before the signal
    proc.send_signal(signal.SIGHUP)
    assert until(lambda: ks(kept, 50) - {1, 2, 3})
    assert ks(kept) == {1, 2, 3, 4, 5, 6}
    assert kept.conn.sock is socket_before  # the same connection, served before and after
    assert ks(Client(port)) == {1, 2, 3, 4, 5, 6}


def test_a_config_file_is_read_again_on_sighup(running, tmp_path):
    config = tmp_path / "renard.conf"
    config.write_text("RENARD_COUNT=2\n")
    proc, port = running("--config", str(config))
    client = Client(port)
    assert ks(client) == {1, 2}
    config.write_text("# moved\nRENARD_COUNT=3\nRENARD_LOCATION=https://cdn.example.net/fox/{n}.jpg\n")
    proc.send_signal(signal.SIGHUP)
    expected = {f"https://cdn.example.net/fox/{k}.jpg" for k in (1, 2, 3)}
    assert until(lambda: locations(client, 20) <= expected)
    assert locations(client) == expected


def test_a_bad_config_file_on_sighup_changes_nothing_and_prints_one_line(running, tmp_path):
    config = tmp_path / "renard.conf"
    config.write_text("RENARD_COUNT=2\n")
    proc, port = running("--config", str(config))
    client = Client(port)
    config.write_text("RENARD_COUNT=0\n")
    proc.send_signal(signal.SIGHUP)
    line = stderr_line(proc)
    assert line == (
        f"renard: reload failed, nothing changed: {config}: RENARD_COUNT: "
        'must be an integer from 1 to 1000000 (got "0")\n'
    )
    assert ks(client) == {1, 2}
    config.unlink()
    proc.send_signal(signal.SIGHUP)
    assert stderr_line(proc).startswith(f"renard: reload failed, nothing changed: --config: cannot read {config}: ")
    assert ks(client) == {1, 2}
    assert proc.poll() is None


def test_an_emptied_folder_on_sighup_changes_nothing(running, tmp_path):
    images(tmp_path, 1, 2)
    proc, port = running("--count-from", str(tmp_path))
    (tmp_path / "Renard-1.png").unlink()
    proc.send_signal(signal.SIGHUP)
    assert stderr_line(proc).startswith("renard: reload failed, nothing changed: --count-from: no image: ")
    assert ks(Client(port)) == {1, 2}


def test_sighup_without_files_keeps_serving(running):
    proc, port = running("--count", "4")
    proc.send_signal(signal.SIGHUP)
    time.sleep(0.2)
    assert proc.poll() is None
    assert ks(Client(port)) == {1, 2, 3, 4}
