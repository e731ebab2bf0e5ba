"""A private apt for the tests: its own sources, lists, cache and an empty dpkg status in a
folder, so that it sees only the repository under test and never touches the machine's apt;
and that repository served over HTTP on loopback (python's http.server), as a user's apt
reaches it."""

import functools
import http.server
import threading
from contextlib import contextmanager
from pathlib import Path

from conftest import run

SOURCE = "deb [signed-by={keyring}] {url} stable main"  # the line packaging/README.md gives a user


@contextmanager
def served(folder: Path):
    """folder over HTTP on 127.0.0.1 (a free port); yields its URL."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class PrivateApt:
    """apt-get with every path of its own under root."""

    def __init__(self, root: Path, source_line: str):
        self.root = root
        for sub in ["lists/partial", "cache/archives/partial", "parts", "prefs"]:
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "status").write_text("")
        (root / "sources.list").write_text(source_line + "\n")
        self.options = [
            f"-oDir::Etc::SourceList={root / 'sources.list'}",
            f"-oDir::Etc::SourceParts={root / 'parts'}",
            f"-oDir::Etc::PreferencesParts={root / 'prefs'}",
            f"-oDir::State::Lists={root / 'lists'}",
            f"-oDir::State::status={root / 'status'}",
            f"-oDir::Cache={root / 'cache'}",
            "-oAPT::Sandbox::User=root",
            "-oDebug::NoLocking=1",
        ]

    def __call__(self, *args, cwd=None):
        return run("apt-get", *self.options, *args, check=False, cwd=cwd, timeout=120)
