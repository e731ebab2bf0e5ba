"""No test leaves a process behind: every test is checked, after it ends, for
processes it started that still run, and fails naming them.

The test session makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux), so a
server whose parent died (an arena killed mid-bench, a shell that exited) is re-parented to
this process instead of init and is still seen as the session's descendant."""

import ctypes
import importlib.machinery
import importlib.util
import os
import time
from pathlib import Path

import pytest

PR_SET_CHILD_SUBREAPER = 36
GRACE_SECONDS = 10  # how long a process stopped at the test's end may take to exit


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def descendants(root: int) -> dict[int, str]:
    """Pid -> command line of every live process under `root` (zombies left out: they have
    exited, only their exit status is left for the subreaper to collect)."""
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile
        fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) ": state ppid ...
        if fields[0] in ("Z", "X"):
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        commands[pid] = b" ".join(argv).decode(errors="replace").strip() or text.split(" ", 2)[1]
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found[pid] = commands[pid]
        todo.extend(children.get(pid, []))
    return found


def reap(pids) -> None:
    """Collect the exit status of these children, if they have exited (as subreaper, re-parented
    ones are ours). Only these: a wait on any child would take the status of a process a test
    or fixture still holds a Popen for, which would then read it as 0."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass  # not our child (a grandchild), or collected already


@pytest.fixture(scope="session", autouse=True)
def session_is_subreaper():
    become_subreaper()
    yield


@pytest.fixture(autouse=True)
def no_process_left_behind(request):
    before = set(descendants(os.getpid()))
    yield
    deadline = time.monotonic() + GRACE_SECONDS
    while True:  # zombies are not counted: they have exited
        left = {pid: cmd for pid, cmd in descendants(os.getpid()).items() if pid not in before}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if left:
        for pid in left:  # stop them so that the next tests start clean
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        reap(left)
        named = "; ".join(f"pid {pid}: {cmd[:200]}" for pid, cmd in sorted(left.items()))
        pytest.fail(f"{request.node.nodeid} left {len(left)} process(es) running: {named}", pytrace=False)


@pytest.fixture(scope="session")
def flake_script():
    """scripts/flake as a module (it has no .py suffix): its log readers, for the tests."""
    path = Path(__file__).resolve().parents[2] / "scripts" / "flake"
    loader = importlib.machinery.SourceFileLoader("flake_script", str(path))
    script = importlib.util.module_from_spec(importlib.util.spec_from_loader("flake_script", loader))
    loader.exec_module(script)
    return script
