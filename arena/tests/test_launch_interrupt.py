"""An interrupt (Ctrl-C, or SIGTERM turned into one by the arena) that lands while an entry
is starting leaves no server behind (a bench's fixture server once outlived the
interrupted bench). Real processes: a stand-in entry that never says it is listening, and
a real signal delivered while the arena waits for it."""

import os
import signal
from pathlib import Path

import pytest
from conftest import descendants

from arena.bench import measure as bench
from arena.entries.manifest import load_manifest
from arena.entries.process import Launch, free_port, launch_ready

MANIFEST = """[[entry]]
name = "slow-start"
language = "shell (fixture)"
kind = "peer"
tier = "infrastructure"
description = "never prints its listening line"
requires = ["sh", "sleep"]
build = []
run = "sh -c 'sleep 300; echo $0' {listen}"
artifacts = []
version = "sleep --version"
"""


@pytest.fixture
def slow_start(tmp_path: Path):
    folder = tmp_path / "peers" / "slow-start"
    folder.mkdir(parents=True)
    (folder / "entry.toml").write_text(MANIFEST)
    (entry,) = load_manifest(folder / "entry.toml")
    return entry


class Interrupted(Exception):
    pass


@pytest.fixture
def interrupt_in_half_a_second():
    def raise_interrupted(signum, frame):
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, raise_interrupted)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def servers_left() -> list[str]:
    return [cmd for cmd in descendants(os.getpid()).values() if "sleep 300" in cmd]


def test_an_interrupt_while_waiting_for_the_listening_line_stops_the_server(slow_start, interrupt_in_half_a_second):
    launch = Launch(port=free_port())
    with pytest.raises(Interrupted):
        launch_ready(slow_start, launch, timeout_s=20)
    assert servers_left() == []


def test_an_interrupt_while_timing_the_startup_stops_the_server(slow_start, interrupt_in_half_a_second):
    launch = Launch(port=free_port())
    with pytest.raises(Interrupted):
        bench.startup_ms(slow_start, launch, timeout_s=20)
    assert servers_left() == []
