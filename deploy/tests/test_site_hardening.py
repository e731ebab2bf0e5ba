"""The public side of nginx-site.conf as a security reviewer reads it: HSTS and nosniff on
every answer (the redirects, an image, a 404), no version in the Server header, port 80
redirecting to the site's own name whatever Host a visitor sends, and the per-address
limits: a page of avatars and a steady visitor pass from one address, a flood from one
address meets 429, the machine's own address is not limited.

The limits key on the visitor's address: the tests connect to 127.0.0.1 from other
addresses of the loopback network (127.0.0.2 …), each a visitor of its own."""

import http.client
import subprocess
import threading
import time

import pytest

from stack import Stack

HSTS = "max-age=63072000"
RATE_PER_S = 50  # the site's limit_req_zone rate
BURST = 200  # the site's limit_req burst


EXTENSIONS = ("png", "jpg", "jpeg", "webp", "avif", "svg")  # what the images' location serves


@pytest.fixture(scope="module")
def site(renard, tmp_path_factory):
    # Beside the SVG foxes, an image of each other kind the site serves (bytes are irrelevant).
    files = {f"Renard-50.{ext}": f"image {ext}" for ext in EXTENSIONS if ext != "svg"}
    with Stack(renard, tmp_path_factory.mktemp("site"), upstream="unix", files=files) as s:
        yield s


def get(site: Stack, path: str, source: str = "127.0.0.1", conn=None) -> http.client.HTTPResponse:
    conn = conn or http.client.HTTPSConnection(
        "127.0.0.1", site.port, timeout=10, context=site.tls(), source_address=(source, 0)
    )
    conn.request("GET", path)
    answer = conn.getresponse()
    answer.read()
    return answer


@pytest.mark.parametrize(
    ("path", "status"),
    [("/", 302), ("/?seed=x", 302), ("/Renard-1.svg", 200), ("/Renard-99.svg", 404), ("/nothing", 404)],
)
def test_every_answer_carries_hsts_and_nosniff_and_no_version(site, path, status):
    answer = get(site, path)
    assert answer.status == status
    assert answer.getheader("Strict-Transport-Security") == HSTS
    assert answer.getheader("X-Content-Type-Options") == "nosniff"
    assert answer.getheader("Server") == "nginx"  # server_tokens off: no version


def test_an_image_keeps_its_cache_header_beside_the_security_ones(site):
    answer = get(site, "/Renard-3.svg")
    assert answer.getheader("Cache-Control") == "public, max-age=31536000, immutable"
    assert answer.getheader("Content-Security-Policy") == "default-src 'none'; style-src 'unsafe-inline'; sandbox"


@pytest.mark.parametrize("ext", EXTENSIONS)
def test_each_image_kind_is_served_cached_with_the_security_headers(site, ext):
    answer = get(site, f"/Renard-{1 if ext == 'svg' else 50}.{ext}")
    assert answer.status == 200
    assert answer.getheader("Cache-Control") == "public, max-age=31536000, immutable"
    assert answer.getheader("Strict-Transport-Security") == HSTS
    assert answer.getheader("X-Content-Type-Options") == "nosniff"


def test_hsts_over_http2_on_ipv6_with_curl(site):
    out = subprocess.run(
        ["curl", "-sS", "--http2", "--max-time", "10", "--cacert", str(site.cert), "-o", "/dev/null", "-D", "-"]
        + [f"https://[::1]:{site.port}/Renard-2.svg"],
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    ).stdout.lower()
    assert out.startswith("http/2 200")
    assert f"strict-transport-security: {HSTS}" in out


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1", "avatar.example.org.evil.example"])
def test_port_80_redirects_to_the_site_name_whatever_the_host_header(site, host):
    conn = http.client.HTTPConnection("127.0.0.1", site.http_port, timeout=10)
    conn.request("GET", "/x?seed=y", headers={"Host": host})
    answer = conn.getresponse()
    assert answer.status == 301
    assert answer.getheader("Location") == "https://avatar.example.org/x?seed=y"
    assert answer.getheader("Server") == "nginx"


def test_a_page_of_avatars_then_a_steady_visitor_from_one_address_all_pass(site):
    # A page showing 100 avatars: 100 redirects and 100 images at once, on 6 connections as a
    # browser opens them; then one visitor at 40 requests a second (below the rate) for 5 s.
    source, failures, answered = "127.0.0.2", [], []

    def page_part(paths: list[str]) -> None:
        conn = http.client.HTTPSConnection(
            "127.0.0.1", site.port, timeout=10, context=site.tls(), source_address=(source, 0)
        )
        for path in paths:
            status = get(site, path, conn=conn).status
            (answered if status in (200, 302) else failures).append((path, status))
        conn.close()

    paths = [f"/?seed=a{i}" for i in range(100)] + [f"/Renard-{1 + i % 21}.svg" for i in range(100)]
    threads = [threading.Thread(target=page_part, args=(paths[i::6],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    conn = http.client.HTTPSConnection(
        "127.0.0.1", site.port, timeout=10, context=site.tls(), source_address=(source, 0)
    )
    for _ in range(5 * 40):  # paced: never faster than 40/s, whatever the machine's delays
        time.sleep(1 / 40)
        status = get(site, "/", conn=conn).status
        (answered if status == 302 else failures).append(("/", status))
    assert failures == []
    assert len(answered) == 400


def test_a_flood_from_one_address_meets_429_beyond_the_burst(site):
    # 4 connections from one address asking as fast as they can, 1000 requests: the burst
    # passes at once, the rest only at 50 a second, so most are refused.
    source, statuses, lock = "127.0.0.3", [], threading.Lock()

    def flood() -> None:
        conn = http.client.HTTPSConnection(
            "127.0.0.1", site.port, timeout=10, context=site.tls(), source_address=(source, 0)
        )
        for _ in range(250):
            status = get(site, "/", conn=conn).status
            with lock:
                statuses.append(status)
        conn.close()

    started = time.monotonic()
    threads = [threading.Thread(target=flood) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    elapsed = time.monotonic() - started
    passed = statuses.count(302)
    assert set(statuses) <= {302, 429}
    assert len(statuses) == 1000
    # At most the burst, plus what the rate let through while the flood lasted (+1: the
    # bucket's first request).
    assert BURST <= passed <= BURST + 1 + RATE_PER_S * elapsed + RATE_PER_S, (passed, elapsed)
    assert statuses.count(429) > 0


def test_the_machines_own_address_is_not_limited(site):
    conn = http.client.HTTPSConnection("127.0.0.1", site.port, timeout=10, context=site.tls())
    statuses = [get(site, "/", conn=conn).status for _ in range(600)]
    assert statuses.count(302) == 600
