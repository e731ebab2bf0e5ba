"""One handle on a server being measured (entries/handle.py): an entry the arena started, a
running server at a URL, a stack behind nginx all answer the same five questions."""

import subprocess

import pytest

from arena.entries.handle import Handle
from arena.entries.process import Server
from arena.entries.remote import Remote, remote_entry
from arena.stack.front import Running

QUESTIONS = ("tree_pids", "cpu_seconds", "peak_rss_bytes", "exited", "answer_problem")


@pytest.mark.parametrize("kind", [Server, Remote, Running], ids=lambda k: k.__name__)
def test_every_kind_of_server_answers_the_handle_s_questions(kind):
    assert all(callable(getattr(kind, q, None)) for q in QUESTIONS)


def test_a_running_server_whose_process_ended_says_so():
    child = subprocess.Popen(["sleep", "30"])
    try:
        entry = remote_entry("http://127.0.0.1:9/", pid=child.pid)
        assert isinstance(entry, Handle) and entry.exited() is None
    finally:
        child.kill()
        child.wait()
    assert entry.exited() == f"process {child.pid} (--pid) exited"
    assert remote_entry("http://127.0.0.1:9/").exited() is None  # no --pid: not known
