"""report.lua's done() with a real wrk: the histogram it folds, and the bound that keeps a long
run with widely spread latencies from hanging wrk in done() (wrk's stats_value_at rescans its
histogram on every call, so folding is quadratic)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from arena.core.modes import mode
from arena.load.wrk import wrk_script

pytestmark = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (scripts/deps test)")


class Found(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", "/a.png")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Found)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def wrk_json(url, script) -> dict:
    got = subprocess.run(
        ["wrk", "-t1", "-c2", "-d1s", "-s", str(script), url], capture_output=True, text=True, timeout=60
    )
    assert got.returncode == 0, got.stderr
    (line,) = [x for x in got.stdout.splitlines() if x.startswith("arena-json ")]
    return json.loads(line.removeprefix("arena-json "))


def test_the_histogram_holds_every_answer_wrk_timed(url, tmp_path):
    got = wrk_json(url, wrk_script(mode("keepalive"), tmp_path))
    assert got["requests"] > 0
    assert got["histogram"] and sum(n for _, n in got["histogram"]) >= got["requests"] * 0.9


def test_past_the_fold_bound_the_histogram_is_empty_and_the_percentiles_remain(url, tmp_path):
    script = wrk_script(mode("keepalive"), tmp_path)
    script.write_text("arena_max_fold_steps = 1\n" + script.read_text())
    got = wrk_json(url, script)
    assert got["requests"] > 0 and got["histogram"] == []
    assert got["percentiles"]["50"] > 0 and got["latency_us"]["max"] >= got["percentiles"]["50"]
