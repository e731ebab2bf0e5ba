"""The path a visitor takes: nginx (deploy/nginx-site.conf) answers over HTTPS, on IPv4 and
IPv6, proxies / to renard, which redirects to an image that nginx serves itself, cached
for a year; plain HTTP only moves the visitor to HTTPS."""

import re
import subprocess

import pytest

from foxes import fox_svg
from http_client import Client

IMAGE_RE = re.compile(r"^https://127\.0\.0\.1:(\d+)/Renard-(\d+)\.svg$")
IMMUTABLE = "public, max-age=31536000, immutable"


def follow(client: Client, path: str) -> tuple[int, bytes, dict[str, str]]:
    """GET path through nginx, then the image its Location names: (k, image bytes, image headers)."""
    answer = client.get(path)
    assert answer.status == 302, answer
    match = IMAGE_RE.match(answer.headers["location"])
    assert match, answer.headers["location"]
    image = client.get(answer.headers["location"].split(str(client.port), 1)[1])
    assert image.status == 200, image
    return int(match.group(2)), image.body, image.headers


def curl(stack, *args: str) -> dict[str, str]:
    """curl as a visitor runs it, trusting the test's certificate: the status line's protocol
    and code and the headers (lower-case names) of the one answer."""
    result = subprocess.run(
        ["curl", "--silent", "--show-error", "--max-time", "10", "--cacert", str(stack.cert)]
        + ["--output", "/dev/null", "--dump-header", "-", *args],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert result.returncode == 0, result.stderr
    status, *lines = [line.strip() for line in result.stdout.strip().splitlines()]
    headers = dict(line.split(": ", 1) for line in lines)
    return {"status": status, **{k.lower(): v for k, v in headers.items()}}


def test_a_visitor_follows_the_redirect_to_the_image_bytes(stack):
    client = Client(stack.port, tls=stack.tls())
    k, body, headers = follow(client, "/")
    assert 1 <= k <= 21
    assert body == fox_svg(k).encode()
    assert headers["content-type"] == "image/svg+xml"
    assert headers["cache-control"] == IMMUTABLE


def test_the_redirect_itself_is_not_cached_and_the_seeded_one_is(stack):
    client = Client(stack.port, tls=stack.tls())
    assert client.get("/").headers["cache-control"] == "no-store"
    assert client.get("/?seed=alice").headers["cache-control"] == "public, max-age=86400"


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]"])
def test_curl_over_https_http2_on_ipv4_and_ipv6(stack, host):
    redirect = curl(stack, "--http2", f"https://{host}:{stack.port}/?seed=alice")
    assert redirect["status"] == "HTTP/2 302"
    assert IMAGE_RE.match(redirect["location"])
    image = curl(stack, "--http2", redirect["location"].replace("127.0.0.1", host))
    assert (image["status"], image["cache-control"]) == ("HTTP/2 200", IMMUTABLE)


def test_curl_over_https_http1_with_the_certificate_name(stack):
    # As a visitor names the site: avatar.test resolved to the loopback address.
    answer = curl(
        stack, "--http1.1", "--resolve", f"avatar.test:{stack.port}:::1", f"https://avatar.test:{stack.port}/"
    )
    assert (answer["status"], answer["cache-control"]) == ("HTTP/1.1 302 Found", "no-store")


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]"])
def test_plain_http_moves_to_https_on_ipv4_and_ipv6(stack, host):
    answer = curl(stack, f"http://{host}:{stack.http_port}/?seed=alice")
    assert answer["status"] == "HTTP/1.1 301 Moved Permanently"
    # To the site's own name (server_name), never to the Host the visitor sent.
    assert answer["location"] == "https://avatar.example.org/?seed=alice"


def test_certbots_challenge_is_answered_over_plain_http(stack):
    # Renewals with --webroot: the token is served on port 80, not moved to HTTPS.
    challenge = stack.images / ".well-known/acme-challenge"
    challenge.mkdir(parents=True)
    (challenge / "t0ken").write_text("t0ken.thumbprint")
    client = Client(stack.http_port)
    answer = client.get("/.well-known/acme-challenge/t0ken")
    assert (answer.status, answer.body) == (200, b"t0ken.thumbprint")
    assert client.get("/.well-known/acme-challenge/missing").status == 404


def test_a_seeded_url_gives_the_same_image_twice(stack):
    first = follow(Client(stack.port, tls=stack.tls()), "/?seed=alice")
    second = follow(Client(stack.port, tls=stack.tls()), "/?seed=alice")
    assert first[0] == second[0] and first[1] == second[1]


def test_random_visits_see_more_than_one_image(stack):
    client = Client(stack.port, tls=stack.tls())
    seen = {follow(client, f"/?r={i}")[0] for i in range(40)}
    assert len(seen) > 1  # all 40 alike: probability 21^-39


def test_healthz_and_metrics_are_not_exposed_publicly(stack):
    client = Client(stack.port, tls=stack.tls())
    assert client.get("/healthz").status == 404
    assert client.get("/metrics").status == 404


def test_other_paths_are_not_forwarded(stack):
    client = Client(stack.port, tls=stack.tls())
    assert client.get("/index.php").status == 404
    assert client.get("/Renard-99.svg").status == 404


def test_nginx_reuses_its_connections_to_renard(stack):
    client = Client(stack.port, tls=stack.tls())
    for _ in range(50):
        assert client.get("/").status == 302
    # The connections renard accepted on its address (TCP or Unix): nginx's, kept alive.
    renard, address = f"pid={stack.instances[0].pid},", stack.listen_address(0).removeprefix("unix:")
    established = subprocess.run(
        ["ss", "-H", "--tcp", "--unix", "--processes", "state", "established"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    mine = [line for line in established if renard in line and f"{address} " in line]
    assert 1 <= len(mine) <= 2, mine  # one kept-alive upstream connection, not 50
