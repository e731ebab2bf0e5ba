"""arena stack without load: stacks named, nginx configs rendered (and accepted by `nginx -t`),
/proc and h2load read, the figures and the report section (synthetic samples)."""

import json
import shutil
import struct
import subprocess
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import pytest
from test_cli import arena, repo  # noqa: F401 (the fixture)

from arena.core.model import Config, Run
from arena.entries.manifest import discover
from arena.load import h2load
from arena.load.driver import LoadError
from arena.report import write_run_reports
from arena.report.stacks import run_part, stack_sections, summary_lines, targets_section, write
from arena.stack import front as stackfront
from arena.stack import read as stackread
from arena.stack import run as stack
from arena.stack.run import StackRun, StackSample

REPO = Path(__file__).resolve().parents[2]


def entries():
    return {e.name: e for e in discover(REPO)}


def test_the_baselines_come_first_and_each_name_becomes_a_stack():
    stacks = stack.resolve(["rust", "rust+unix", "php-fpm", "nginx-302"], entries())
    assert [(s.name, s.kind, s.transport) for s in stacks] == [
        ("nginx-302", "alone", None),
        ("nginx-png", "alone", None),
        ("rust", "proxy", "tcp"),
        ("rust+unix", "proxy", "unix"),
        ("php-fpm", "inside", None),  # nginx itself: TLS goes into its own nginx, no second hop
    ]
    assert stacks[1].path == "/Renard-1.png" and stacks[1].expect == 200


@pytest.mark.parametrize(
    "name,words",
    [("nope", "no entry named nope"), ("rust+tcp", "+unix"), ("php-fpm+unix", "nginx itself")],
)
def test_a_wrong_stack_name_is_said(name, words):
    with pytest.raises(ValueError, match=words.replace("+", r"\+")):
        stack.resolve([name], entries())


def test_the_png_has_the_size_asked_and_valid_chunks():
    data = stackfront.png()
    assert len(data) == stackfront.PNG_BYTES and data[:8] == b"\x89PNG\r\n\x1a\n"
    at, kinds = 8, []
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        assert struct.unpack(">I", data[at + 8 + length : at + 12 + length])[0] == zlib.crc32(kind + body)
        kinds.append(kind)
        at += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds


def test_split_clients_gives_every_k_a_bucket_within_100_percent():
    http, location = stackfront.split_clients(21, "https://x/R-{n}.png")
    shares = [float(line.split("%")[0]) for line in http.splitlines() if "%" in line]
    assert len(shares) == 20 and sum(shares) < 100 and "* 21;" in http
    assert 'return 302 "https://x/R-$renard_k.png";' in location


def test_a_full_handshake_mode_turns_resumption_off():
    on = stackfront.tls_directives(Path("/c.pem"), Path("/k.pem"), True)
    off = stackfront.tls_directives(Path("/c.pem"), Path("/k.pem"), False)
    assert "ssl_session_cache shared:" in on and "tickets" not in on
    assert "ssl_session_cache off" in off and "ssl_session_tickets off" in off
    assert "ssl_protocols TLSv1.2 TLSv1.3" in on and not on.endswith(";")


@pytest.mark.skipif(not shutil.which("nginx") or not shutil.which("openssl"), reason="needs nginx and openssl")
@pytest.mark.parametrize("name", ["nginx-302", "nginx-png", "rust", "rust+unix"])
def test_nginx_accepts_every_rendered_front_config(tmp_path, name):
    (s,) = [x for x in stack.resolve([name], entries()) if x.name == name]
    cert, key = stackfront.make_certificate(tmp_path)
    upstream = {"tcp": "127.0.0.1:9", "unix": f"unix:{tmp_path}/e.sock", None: None}[s.transport]
    conf = stackfront.front_config(s, tmp_path, 4443, stackfront.tls_directives(cert, key, False), upstream)
    assert "{{" not in conf and "listen 127.0.0.1:4443 ssl http2;" in conf
    (tmp_path / "nginx.conf").write_text(conf)
    p = subprocess.run(
        ["nginx", "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-e", str(tmp_path / "e.log")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 0, p.stderr


def test_proc_stat_is_read_with_a_name_holding_spaces_and_parentheses():
    line = "42 (php-fpm: pool (x)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 11 5 20 0 1 0 100 0 0"
    assert stackread.parse_stat(line) == ("php-fpm: pool (x)", 7 + 11, 3 + 5)


def test_cpu_is_summed_by_process_name_and_a_new_process_counts_from_zero():
    before = {1: ("nginx", 100, 50), 2: ("nginx", 10, 10), 3: ("renard", 5, 5)}
    after = {1: ("nginx", 100, 60), 2: ("nginx", 40, 30), 3: ("renard", 15, 25), 4: ("renard", 2, 0)}
    clk = stackread.CLK_TCK
    assert stackread.cpu_by_process(before, after) == {
        "nginx": [round(30 / clk, 3), round(30 / clk, 3)],
        "renard": [round(12 / clk, 3), round(20 / clk, 3)],
    }


H2LOAD_OUT = """TLS Protocol: TLSv1.3
Application protocol: h2
finished in 3.00s, 9000.00 req/s, 1.50MB/s
requests: 27005 total, 27005 started, 27000 done, 26990 succeeded, 10 failed, 2 errored, 0 timeout
status codes: 0 2xx, 26990 3xx, 0 4xx, 10 5xx
"""


def test_h2load_summary_and_log_become_requests_status_and_percentiles():
    log = "".join(f"17956{i}\t302\t{d}\n" for i, d in enumerate(range(1, 101)))
    figures = h2load.parse_h2load(H2LOAD_OUT, log, 302)
    assert figures["requests"] == 27000
    assert figures["errors"] == {"socket": 12, "status": 10}  # the 5xx are wrong answers, not speed
    assert figures["latency_us"] == {"p50": 50, "p99": 99}
    assert h2load.parse_h2load(H2LOAD_OUT, "", 200)["errors"]["status"] == 27000


def test_h2load_without_its_summary_or_without_http2_is_an_error():
    with pytest.raises(LoadError, match="no summary"):
        h2load.parse_h2load("connect: Connection refused\n", "", 302)
    with pytest.raises(LoadError, match="did not negotiate HTTP/2"):
        h2load.parse_h2load(H2LOAD_OUT.replace(": h2", ": http/1.1"), "", 302)


def test_nearest_rank_percentile():
    assert h2load.percentile([], 99) is None
    assert h2load.percentile([5], 99) == 5
    assert h2load.percentile(list(range(1, 1001)), 99) == 990


def test_samples_are_interleaved_stack_after_stack_then_mode_then_repetition():
    a, b = stack.BASELINES.values()
    steps = [(rep, m, s.name) for rep, m, s in stack.order([a, b], ["keepalive", "h2"], 2)]
    assert steps[:4] == [(0, "keepalive", a.name), (0, "keepalive", b.name), (0, "h2", a.name), (0, "h2", b.name)]
    assert len(steps) == 8 and steps[4][0] == 1


def sample(name, mode, rep, nginx, entry=None, requests=10_000):
    cpu = {"nginx": nginx} | ({"renard": entry} if entry else {})
    return StackSample(name, mode, rep, requests, 1.0, requests, 90.0, 900.0, 0, 0, cpu, 0.9, 1.0, 20_000_000)


def test_a_samples_figures_split_nginx_from_the_entry_and_user_from_kernel():
    s = sample("rust", "keepalive", 0, [0.1, 0.2], [0.05, 0.15])
    assert s.cpu_us_per_req == pytest.approx(50.0)
    assert s.entry_share == pytest.approx(0.4)
    assert s.us_per_req(nginx=True, kernel=True) == pytest.approx(20.0)
    assert s.us_per_req(nginx=False, kernel=False) == pytest.approx(5.0)
    assert StackSample.load(json.loads(json.dumps(s.to_json()))) == s


def record():
    stacks = stack.resolve(["rust"], entries())
    samples = []
    for rep in range(3):
        samples.append(sample("nginx-302", "keepalive", rep, [0.05, 0.05 + rep / 100]))
        samples.append(sample("rust", "keepalive", rep, [0.1, 0.1], [0.0, 0.1 + rep / 100]))
    failures = [
        {"stack": "nginx-png", "mode": "keepalive", "rep": 0, "reason": "nginx (front) exited with status 1\n…"}
    ]
    config = {"modes": ["keepalive"], "server_cpus": "0"}
    return StackRun(config, [s.to_json() for s in stacks], samples, failures, "stack method words")


def test_the_section_divides_each_stacks_cpu_by_nginx_alone():
    sections = stack_sections(record())
    keepalive = sections[0]
    rows = {r[0]: r for r in keepalive.table.rows}
    assert rows["nginx-302"][3] == "11.0 (10.0–12.0)" and rows["nginx-302"][5] == "–"
    assert rows["rust"][3] == "31.0 (30.0–32.0)"
    assert rows["rust"][4] == "2.82× (2.50–3.20)" and rows["rust"][5] == "35% (33%–38%)"
    assert rows["rust"][7] == "0.31 / 0.90"  # a share of one core each: nothing was saturated
    assert rows["nginx-png"][8] == "0" and keepalive.table.muted == {1}
    assert keepalive.charts and "<svg" in keepalive.charts[0]
    breakdown = {(r[0], r[1]): r for r in sections[1].table.rows}
    assert breakdown[("rust", "keepalive")][2:] == ["10.0", "10.0", "0.00", "11.0", "31.0"]
    assert sections[2].table.rows == [
        [
            "renard behind nginx, the better of TCP and a Unix socket",
            "keepalive",
            "rust ÷ nginx-302",
            "2.82× (2.50–3.20)",
            "2.5×",
            "no (the range crosses the limit)",
        ]
    ]
    assert sections[3].table.rows == [["nginx-png", "keepalive", "1", "nginx (front) exited with status 1"]]
    assert any(line.startswith("rust keepalive: ") and "2.82×" in line for line in summary_lines(record()))


def test_a_runs_report_includes_the_stack_section_and_says_an_unreadable_file(tmp_path):
    run = Run.load(json.loads((Path(__file__).parent / "fixtures" / "run_sample.json").read_text()))
    (tmp_path / "stack").mkdir()
    data, md, page = write(tmp_path / "stack", record())
    assert StackRun.load(json.loads(data.read_text())).samples == record().samples
    assert page.read_text().count("<svg") == 1
    _, md, page = write_run_reports(run, tmp_path)
    text = md.read_text()
    assert "## Behind nginx with TLS: the deployed path\n\nstack method words" in text
    assert "| rust | 10,000 (10,000–10,000) | 900 | 31.0 (30.0–32.0) | 2.82× (2.50–3.20) |" in text
    data.write_text("{")
    _, md, _ = write_run_reports(run, tmp_path)
    assert "stack/stack.json could not be read (JSONDecodeError" in md.read_text()


@pytest.mark.parametrize(
    "where,value,says",
    [
        (("samples", 1, "rps"), "fast", "samples[1].rps: must be int/float, got str"),
        (("failures", 0, "reason"), None, "failures[0].reason: missing key"),
        (("stacks", 0, "expect"), "302", "stacks[0].expect: must be int, got str"),
    ],
)
def test_a_stack_json_that_is_not_one_names_the_element_and_the_key(tmp_path, where, value, says):
    doc = record().to_json()
    holder = doc[where[0]][where[1]]
    if value is None:
        del holder[where[2]]
    else:
        holder[where[2]] = value
    (tmp_path / "stack").mkdir()
    (tmp_path / "stack" / "stack.json").write_text(json.dumps(doc))
    (part,) = run_part(tmp_path)
    assert part.method == f"stack/stack.json could not be read (SchemaError: {says})."


@pytest.mark.parametrize(
    "args,flag",
    [
        (["stack", "--modes", "keepalive,turbo"], "--modes"),
        (["stack", "nope"], "STACK"),
        (["stack", "--reps", "0"], "--reps"),
        (["stack", "--mix", "busy"], "--mix"),
    ],
)
def test_bad_stack_input_is_one_line_naming_the_flag_and_exit_2(repo, args, flag):  # noqa: F811
    p = arena("--repo", str(repo), *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and flag in p.stderr and p.stderr.startswith("arena: "), sys.executable


def test_the_method_says_which_mix_was_sent_and_how_h2load_sends_it():
    seeded = stack.method_words(replace(Config(), mix="seeded"))
    assert "Requests sent (--mix seeded): 80% `GET /`, 15% `/?seed=NAME`" in seeded
    assert "h2load (-i, a file of the sequence's first 20,000 request-targets)" in seeded
    default = stack.method_words(Config())
    assert "Requests sent (--mix default): every request `GET /`" in default and "h2load (-i" not in default


def test_a_target_holds_when_the_best_stacks_median_ratio_is_within_its_limit():
    stacks = [
        {"name": n, "kind": "inside"} for n in ("nginx-302", "nginx-split", "nginx-lua-renard", "rust", "rust+unix")
    ]
    samples = []
    for rep in range(3):
        samples += [
            sample("nginx-302", "keepalive", rep, [0.05, 0.05]),
            sample("nginx-split", "keepalive", rep, [0.05, 0.05 + rep / 1000]),
            sample("nginx-lua-renard", "keepalive", rep, [0.06, 0.05]),
            sample("rust", "keepalive", rep, [0.2, 0.2]),
            sample("rust+unix", "keepalive", rep, [0.1, 0.12]),
        ]
    rows = targets_section(StackRun({"modes": ["keepalive"]}, stacks, samples, [], "")).table.rows
    assert [(r[2], r[3], r[5]) for r in rows] == [
        ("rust+unix ÷ nginx-302", "2.20× (2.20–2.20)", "yes"),  # the better of the two transports
        ("nginx-lua-renard ÷ nginx-split", "1.09× (1.08–1.10)", "yes"),
    ]
