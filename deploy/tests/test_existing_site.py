"""The avatar inside a site that already exists (deploy/nginx/: the snippet and its http file),
in a booted Debian 12 (scripts/boot, as test_booted.py): an avatar host as its owner ran it
before renard, over HTTPS, with its images, a static page, a second location with a header of
its own and its 404s. renard is installed from this repository with `deploy/install --snippet`,
the server block gets deploy/README.md's two lines ("Into the nginx you already run"), nginx
reloads; then the site's own answers are what they were, byte for byte but the Date, and the
old URL answers as `/` does: the same seeded Location and headers, the same uniform draw."""

import http.client
import os
import re
import shutil
import ssl
import subprocess
import time
import types
from pathlib import Path

import pytest

from booted_nginx import booted
from renard_conformance.stats import chi_square, chi_square_p_value
from stack import free_port, self_signed

REPO = Path(__file__).resolve().parents[2]
NAME = "deploy-existing"
ROOTFS = ("deploy-booted", "systemd", "systemd-sysv", "dbus", "nginx-light", "openssl", "curl")  # test_booted's
MACHINE = REPO / "results" / "boot" / NAME  # the machine's root, as this machine sees it
IMAGES = 21
GUIDE = REPO / "deploy" / "README.md"
# deploy/README.md, "Into the nginx you already run": the lines that go in the server block.
AVATAR_LINES = [
    "    location = / { include snippets/renard.conf; }",
    "    location = /avatar_renard.php { include snippets/renard.conf; }",
]
# The owner's site, before renard: {port} a free port of this shared machine for its 443.
SITE = """server {
    listen 127.0.0.1:{port} ssl http2;
    server_name avatar.test;
    ssl_certificate /etc/ssl/avatar/fullchain.pem;
    ssl_certificate_key /etc/ssl/avatar/privkey.pem;
    root /srv/avatar;
    location / {
        try_files $uri $uri/ =404;
    }
    location /notes/ {
        alias /srv/notes/;
        add_header X-Notes "the owner's";
    }
    location ~ \\.php$ {
        return 410;
    }
}
"""
# The site's own answers, which the avatar must leave as they were.
OWN_PATHS = ["/about.html", "/notes/hello.txt", "/Renard-3.png", "/missing", "/notes/", "/other.php"]

if os.geteuid() != 0 or not shutil.which("systemd-nspawn") or not shutil.which("mmdebstrap"):
    pytest.skip(
        "booting a machine needs root, systemd-nspawn and mmdebstrap (scripts/apt.txt)", allow_module_level=True
    )


def run(command: str) -> str:
    """command run by bash inside the machine, as root; its output."""
    result = subprocess.run(
        [str(REPO / "scripts/boot"), "run", NAME, "bash", "-c", command], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"{command}: {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def host(path: str) -> Path:
    return MACHINE / path.lstrip("/")


def fetch(machine, path: str, method: str = "GET") -> tuple[int, list[tuple[str, str]], bytes]:
    """(status, headers but Date, body) of one request over HTTPS on a new connection."""
    conn = http.client.HTTPSConnection("127.0.0.1", machine.port, timeout=10, context=machine.tls)
    try:
        conn.request(method, path, headers={"Host": "avatar.test"})
        answer = conn.getresponse()
        return answer.status, [(k, v) for k, v in answer.getheaders() if k.lower() != "date"], answer.read()
    finally:
        conn.close()


def reload_nginx(machine, until) -> None:
    """nginx -t and a reload, then waits (20 s at most) for its new workers: until() is true."""
    run("nginx -t -q && systemctl reload nginx")
    for _ in range(100):
        if until():
            return
        time.sleep(0.2)
    pytest.fail("nginx's reload did not take effect within 20 s")


@pytest.fixture(scope="module")
def machine(renard):
    with booted(NAME, list(ROOTFS)):
        yield set_up()


def set_up() -> types.SimpleNamespace:
    """The owner's site answering; its answers recorded; renard installed beside it (the http
    file alone changes nothing: recorded again); then the avatar's lines and a reload."""
    for k in range(1, IMAGES + 1):
        host(f"/srv/avatar/Renard-{k}.png").parent.mkdir(parents=True, exist_ok=True)
        host(f"/srv/avatar/Renard-{k}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + f"renard {k}".encode())
    host("/srv/avatar/about.html").write_text("<!doctype html><title>About</title><p>Foxes.</p>\n")
    host("/srv/notes").mkdir(parents=True)
    host("/srv/notes/hello.txt").write_text("a note\n")
    tls = host("/etc/ssl/avatar")
    tls.mkdir(parents=True)
    cert, key = self_signed(tls)
    cert.rename(tls / "fullchain.pem")
    key.rename(tls / "privkey.pem")
    machine = types.SimpleNamespace(port=free_port(), tls=ssl.create_default_context(cafile=tls / "fullchain.pem"))
    site = host("/etc/nginx/conf.d/avatar.conf")
    site.write_text(SITE.replace("{port}", str(machine.port)))
    run("nginx -t -q && systemctl restart nginx")
    machine.before = {path: fetch(machine, path) for path in OWN_PATHS}
    run("/repo/deploy/install --snippet --server-name avatar.test --images /srv/avatar")
    run("systemctl daemon-reload && systemctl enable --now renard.socket")
    reload_nginx(machine, lambda: True)
    machine.installed = {path: fetch(machine, path) for path in OWN_PATHS}
    text = site.read_text()
    site.write_text(text[: text.rindex("}")] + "\n".join(AVATAR_LINES) + "\n}\n")
    reload_nginx(machine, lambda: fetch(machine, "/")[0] == 302)
    return machine


def location(answer) -> str:
    status, headers, _ = answer
    value = dict(headers).get("Location", "")
    assert status == 302 and re.fullmatch(r"https://avatar\.test/Renard-\d+\.png", value), (status, headers)
    return value


def test_the_guide_holds_the_lines_the_test_writes():
    guide = GUIDE.read_text()
    for line in AVATAR_LINES:
        assert line.strip() in guide, f"deploy/README.md does not say: {line.strip()}"


def test_the_sites_own_locations_answer_as_before_renard(machine):
    assert machine.before["/about.html"][0] == 200 and machine.before["/notes/hello.txt"][0] == 200
    assert machine.before["/missing"][0] == 404 and machine.before["/other.php"][0] == 410
    assert ("X-Notes", "the owner's") in machine.before["/notes/hello.txt"][1]
    assert machine.installed == machine.before  # renard and its http file alone
    assert {path: fetch(machine, path) for path in OWN_PATHS} == machine.before  # and with the avatar's lines


def test_the_old_url_answers_exactly_as_the_root_with_its_query(machine):
    for query in ["?seed=alice", "?seed=bob", "?seed=caf%C3%A9", "?seed=", "?seed=alice&size=80", "?size=80", ""]:
        for method in ("GET", "HEAD"):
            root, old = fetch(machine, "/" + query, method), fetch(machine, "/avatar_renard.php" + query, method)
            location(root)
            if "seed=" in query:
                assert old == root, (method, query)  # the same Location, every header, the body
            else:  # a random draw: the same answer but for the Location it drew
                assert [h for h in old[1] if h[0] != "Location"] == [h for h in root[1] if h[0] != "Location"]
                location(old)
    # And what renard itself answers on its socket for that seed.
    direct = run("curl -sS -D - -o /dev/null --unix-socket /run/renard/renard.sock 'http://x/?seed=alice'")
    assert f"Location: {location(fetch(machine, '/avatar_renard.php?seed=alice'))}" in direct.splitlines()


def draw_counts(machine, path: str) -> list[int]:
    """How often each image came back in 100 answers per image to `path`, on one connection."""
    conn = http.client.HTTPSConnection("127.0.0.1", machine.port, timeout=10, context=machine.tls)
    counts = [0] * IMAGES
    for _ in range(100 * IMAGES):
        conn.request("GET", path, headers={"Host": "avatar.test"})
        answer = conn.getresponse()
        answer.read()
        value = location((answer.status, answer.getheaders(), b""))
        counts[int(re.search(r"Renard-(\d+)", value)[1]) - 1] += 1
    conn.close()
    return counts


def suspect_draws(draws: dict[str, list[int]]) -> list[str]:
    """Why the draws look other than uniform and alike (p at or under 1e-4), or [] if they do not."""
    why = []
    for path, counts in draws.items():
        _, _, p = chi_square(counts, [100.0] * IMAGES)
        if p <= 1e-4:
            why.append(f"{path} not uniform: p = {p:.3g} over {counts}")
    # The two samples are one distribution: chi-square of the 2 x 21 table (each path drew 2 100).
    both = [a + b for a, b in zip(*draws.values(), strict=True)]
    cells = [(n, total / 2) for counts in draws.values() for n, total in zip(counts, both, strict=True) if total]
    p = chi_square_p_value(sum((n - expected) ** 2 / expected for n, expected in cells), IMAGES - 1)
    if p <= 1e-4:
        why.append(f"the two paths draw differently: p = {p:.3g}")
    return why


def test_the_old_url_and_the_root_draw_the_images_alike(machine):
    # Three tests at p <= 1e-4 flag one uniform draw in 3 000: a suspect draw is followed by a
    # fresh one, and the test fails only when both are suspect (a skewed or split draw always is).
    suspect = []
    for _ in range(2):
        why = suspect_draws({path: draw_counts(machine, path) for path in ("/", "/avatar_renard.php")})
        if not why:
            return
        suspect.append(why)
    pytest.fail(f"two draws suspect: {suspect}")


def test_the_avatar_carries_the_hardened_sites_headers(machine):
    headers = dict(fetch(machine, "/avatar_renard.php")[1])
    assert headers["Strict-Transport-Security"] == "max-age=63072000"
    assert headers["X-Content-Type-Options"] == "nosniff"
