"""`arena bench --cmd`: a server outside the repository, measured beside the floor; its only
check is "GET --path answers --expect"."""

import http.client
import json
import socket
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from arena.entries.outside import OutsideError, get_problem, outside_entry
from arena.entries.process import free_port

REPO = Path(__file__).resolve().parents[2]
HTTP_SERVER = f"{sys.executable} -m http.server --bind 127.0.0.1 {{port}}"


class Answers(BaseHTTPRequestHandler):
    """302 on /, 200 on /here, 404 elsewhere (the query ignored); each request's target and
    Connection header kept in the server's `seen`."""

    def do_GET(self):
        self.server.seen.append((self.path, self.headers.get("Connection")))
        self.send_response({"/": 302, "/here": 200}.get(self.path.split("?")[0], 404))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def serving(context: ssl.SSLContext | None = None):
    """A ThreadingHTTPServer of Answers on 127.0.0.1 (over TLS with a context), serving in a
    thread; the caller shuts it down."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    server.seen = []
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def answers():
    server = serving()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def connect(port: int) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=5)


def test_the_one_check_accepts_the_expected_status_and_says_any_other(answers):
    port = answers.server_address[1]
    assert get_problem(connect(port), "/", 302) == ""
    assert get_problem(connect(port), "/here?x=1", 200) == ""
    assert get_problem(connect(port), "/nowhere", 302) == "GET /nowhere: expected 302, got 404 Not Found"
    shown = get_problem(connect(port), "/", 200, "http://example.test/")
    assert shown == "GET http://example.test/: expected 200, got 302 Found"
    assert answers.seen[1] == ("/here?x=1", "close") and len(answers.seen) == 4


def test_the_one_check_says_when_the_answer_is_not_http():
    listener = socket.create_server(("127.0.0.1", 0))

    def answer_nonsense():
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")

    threading.Thread(target=answer_nonsense, daemon=True).start()
    try:
        problem = get_problem(connect(listener.getsockname()[1]), "/", 302)
    finally:
        listener.close()
    assert problem.startswith("GET /: not an HTTP/1.1 answer (BadStatusLine"), problem


def test_the_one_check_raises_oserror_when_nothing_listens():
    with pytest.raises(OSError):
        get_problem(connect(free_port()), "/", 302)


def arena(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(REPO), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("server --port 8080", "must contain {listen} or {port}"),
        ("server --listen {listen} --conf {config}", "unknown placeholder {config}"),
        ("server 'unclosed {listen}", "cannot be split"),
        ("", "is empty"),
    ],
)
def test_a_command_that_cannot_be_an_entry_is_refused(command, words):
    with pytest.raises(OutsideError, match=words):
        outside_entry(command)


def test_the_check_accepts_the_expected_status_only(tmp_path):
    """http.server answers 404 on a missing path: --expect 404 accepts it, the default 302 does not."""
    from arena.entries.process import Launch, free_port, launch_ready

    entry = outside_entry(HTTP_SERVER, "/nowhere", 404, cwd=tmp_path)
    server = launch_ready(entry, Launch(port=free_port()))
    try:
        assert entry.answer_problem("127.0.0.1", server.port) == ""
        entry.expect = 302
        assert "expected 302, got 404" in entry.answer_problem("127.0.0.1", server.port)
    finally:
        server.stop()


def a_checkout(path: Path) -> str:
    """A git repository at path with one commit (the service's own checkout); its commit."""
    path.mkdir()
    run = lambda *args: subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True)  # noqa: E731
    (path / "server.py").write_text("# the service\n")
    run("init", "-q")
    run("add", "server.py")
    run("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "the service")
    return run("rev-parse", "HEAD").stdout.strip()


@pytest.mark.skipif(not (REPO / "peers" / "floor" / "entry.toml").is_file(), reason="no floor peer")
def test_bench_cmd_ranks_an_outside_server_beside_the_floor_and_its_history_line_carries_the_services_commit(
    tmp_path,
):
    """A one-second keep-alive run of http.server (404 on /nowhere) and the floor: one report;
    with --commit-of its history line is stamped with the service's checkout's HEAD and the
    command, in a series of its own, and the floor's figures with the repository's commit."""
    service_commit = a_checkout(tmp_path / "service")
    p = arena(
        "bench",
        "--quick",
        "--no-verify",
        "--modes",
        "keepalive",
        "--results",
        str(tmp_path / "results"),
        "--cmd",
        HTTP_SERVER,
        "--path",
        "/nowhere",
        "--expect",
        "404",
        "--commit-of",
        str(tmp_path / "service"),
        "floor",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "plan: 2 entries (floor, cmd)" in p.stdout
    (line,) = [json.loads(x) for x in (tmp_path / "results" / "history.jsonl").read_text().splitlines()]
    series = f"cmd {HTTP_SERVER}"
    assert line["services"] == {series: {"commit": service_commit, "dirty": False, "measured": f"--cmd {HTTP_SERVER}"}}
    ours = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert line["commit"] == ours and sorted(line["entries"]) == sorted(["floor", series])
    assert line["entries"][series]["keepalive"]["cpu_of_floor"] > 0
    run_dir = (tmp_path / "results" / "latest").resolve()
    run = json.loads((run_dir / "run.json").read_text())
    assert {e["name"] for e in run["entries"]} == {"floor", "cmd"}
    cmd = [s for s in run["samples"] if s["entry"] == "cmd"]
    assert len(cmd) == 1 and cmd[0]["requests"] > 0 and cmd[0]["non_3xx"] == cmd[0]["requests"]  # every answer a 404
    assert "| cmd |" in (run_dir / "report.md").read_text().replace("`", "")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--commit", "abc123"], "'--commit': is only for a server measured by --cmd or --url"),
        (["--cmd", HTTP_SERVER, "--commit", "two words"], "'--commit': must be one word naming a version"),
        (["--cmd", HTTP_SERVER, "--commit", "abc", "--commit-of", "."], "give either --commit or --commit-of"),
        (["--cmd", HTTP_SERVER, "--commit-of", "{tmp}"], "'--commit-of': {tmp} is not a git checkout"),
    ],
)
def test_a_bad_service_version_is_one_line_and_exit_2(args, words, tmp_path):
    words = words.replace("{tmp}", str(tmp_path))
    p = arena("bench", "--plan", *(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert p.returncode == 2 and words in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_bench_cmd_refuses_a_path_without_a_slash():
    p = arena("bench", "--cmd", HTTP_SERVER, "--path", "nowhere")
    assert p.returncode == 2 and "--path" in p.stderr and p.stderr.count("\n") == 1
