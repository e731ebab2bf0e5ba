"""The path a visitor takes: nginx (deploy/nginx-site.conf) proxies / to renard, which
redirects to an image that nginx serves itself, cached for a year."""

import re
import subprocess

from foxes import fox_svg
from http_client import Client

IMAGE_RE = re.compile(r"^http://127\.0\.0\.1:(\d+)/Renard-(\d+)\.svg$")


def follow(client: Client, path: str) -> tuple[int, bytes, dict[str, str]]:
    """GET path through nginx, then the image its Location names: (k, image bytes, image headers)."""
    answer = client.get(path)
    assert answer.status == 302, answer
    match = IMAGE_RE.match(answer.headers["location"])
    assert match, answer.headers["location"]
    image = client.get(answer.headers["location"].split(str(client.port), 1)[1])
    assert image.status == 200, image
    return int(match.group(2)), image.body, image.headers


def test_a_visitor_follows_the_redirect_to_the_image_bytes(stack):
    client = Client(stack.port)
    k, body, headers = follow(client, "/")
    assert 1 <= k <= 21
    assert body == fox_svg(k).encode()
    assert headers["content-type"] == "image/svg+xml"
    assert "max-age=31536000" in headers["cache-control"]


def test_the_redirect_itself_is_not_cached_and_the_seeded_one_is(stack):
    client = Client(stack.port)
    assert client.get("/").headers["cache-control"] == "no-store"
    assert client.get("/?seed=alice").headers["cache-control"] == "public, max-age=86400"


def test_a_seeded_url_gives_the_same_image_twice(stack):
    client = Client(stack.port)
    first = follow(client, "/?seed=alice")
    second = follow(Client(stack.port), "/?seed=alice")
    assert first[0] == second[0] and first[1] == second[1]


def test_random_visits_see_more_than_one_image(stack):
    client = Client(stack.port)
    seen = {follow(client, f"/?r={i}")[0] for i in range(40)}
    assert len(seen) > 1  # all 40 alike: probability 21^-39


def test_healthz_is_not_exposed_publicly(stack):
    assert Client(stack.port).get("/healthz").status == 404


def test_other_paths_are_not_forwarded(stack):
    client = Client(stack.port)
    assert client.get("/index.php").status == 404
    assert client.get("/Renard-99.svg").status == 404


def test_nginx_reuses_its_connections_to_renard(stack):
    client = Client(stack.port)
    for _ in range(50):
        assert client.get("/").status == 302
    established = subprocess.run(
        ["ss", "-Htn", "state", "established", f"( dport = :{stack.upstreams[0]} )"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert 1 <= len(established) <= 2, established  # one kept-alive upstream connection, not 50
