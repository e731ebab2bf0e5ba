"""The move off the PHP script, as deploy/README.md's "Off the PHP script, no request lost"
writes it, in a booted Debian 12 (scripts/boot, systemd as PID 1): the seed author's set-up
first (nginx over HTTPS for the avatar's name, its images, a static page, php-fpm running the
script at /avatar_renard.php), then the guide's steps: the release's package installed beside
it, the old URL's location switched to renard, nginx reloaded, the PHP location gone and
php-fpm purged; visitors ask for the old URL the whole time.

Each shell line of the guide runs as written (`sudo ` dropped: the test is root), with `name`
and `images` set; test_the_guide_holds_every_line_the_test_runs ties the two together. What the
test changes and the guide does not say: the machine is offline (its Debian sources go, so the
purge removes and installs nothing else), and the site's port 443 is a free port of this
shared machine."""

import re
import shutil
import time

import pytest
from booted import NAME, Visitors, booted, certificate, free_port, https, wait_for_port

from conftest import REPO

GUIDE = REPO / "deploy" / "README.md"
MACHINE = "renard-php-move"
IMAGES = 21
# The seed author's server block (its name as the guide writes it), before renard.
SITE = """server {
    listen 443 ssl http2;
    server_name avatar.example.org;
    ssl_certificate /etc/letsencrypt/live/avatar.example.org/fullchain.pem;
    ssl_certificate_key /etc/letsencrypt/live/avatar.example.org/privkey.pem;
    root /srv/avatar;
    location / {
        try_files $uri $uri/ =404;
    }
    location ~ \\.php$ {
        include snippets/fastcgi-php.conf;
        fastcgi_pass unix:/run/php/php8.2-fpm.sock;
    }
}
"""
PHP_LOCATION = SITE[SITE.index("    location ~ \\.php$") : SITE.rindex("}")]
# Three lines of PHP, as the seed describes them (000_…txt): a redirect to one of the 21 foxes.
SCRIPT = "<?php\nheader('Location: https://avatar.example.org/Renard-' . rand(1, 21) . '.png', true, 302);\n"
# deploy/README.md, "Off the PHP script, no request lost", as written there.
INSTALL = [
    "sudo apt-get install -y ./renard_*.deb",
    'sudo sed -i -e "s|^RENARD_LOCATION=.*|RENARD_LOCATION=https://$name/Renard-{n}.png|"'
    ' -e "s|^RENARD_COUNT_FROM=.*|RENARD_COUNT_FROM=$images|" /etc/renard/renard.conf',
    "sudo systemctl restart renard",
    "sudo curl -sI --unix-socket /run/renard/renard.sock http://localhost/",
]
SWITCH_LINE = "location = /avatar_renard.php { include snippets/renard.conf; }"
RELOAD = ["sudo nginx -t && sudo systemctl reload nginx"]
CHECK = ['curl -sI "https://$name/avatar_renard.php"']
PURGE = [
    "sudo apt-get purge -y php8.2-fpm && sudo apt-get autoremove --purge -y",
    'sudo rm "$images/avatar_renard.php"',
]


def test_the_guide_holds_every_line_the_test_runs():
    guide = GUIDE.read_text()
    for line in [*INSTALL, SWITCH_LINE, *RELOAD, *CHECK, *PURGE, "location ~ \\.php$"]:
        assert line in guide, f"deploy/README.md does not say: {line}"
    # The install line of today, as README.md's "Deploy" and packaging/README.md give it: the
    # package of make release (the release fixture's dist/), installed with that line.
    for page in ("README.md", "packaging/README.md"):
        text = (REPO / page).read_text()
        assert "\nmake release " in text and f"\n{INSTALL[0]} " in text, page


@pytest.fixture
def machine():
    with booted(MACHINE, packages=("php8.2-fpm",)) as machine:
        yield machine


def own_answers(port, cafile) -> dict[str, tuple[int, str]]:
    return {path: https(port, cafile, path) for path in ("/about.html", "/Renard-7.png", "/missing")}


def test_off_php_fpm_onto_renard_while_visitors_ask_for_the_old_url(machine, release, tmp_path):
    root = REPO / "results" / "boot" / MACHINE
    port = free_port()
    cafile = certificate(tmp_path)
    live = root / "etc" / "letsencrypt" / "live" / NAME
    live.mkdir(parents=True)
    for pem in ["fullchain.pem", "privkey.pem"]:
        shutil.copy(tmp_path / pem, live / pem)
    images = root / "srv" / "avatar"
    images.mkdir(parents=True)
    for n in range(1, IMAGES + 1):
        (images / f"Renard-{n}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([n]) * 64)
    (images / "about.html").write_text("<!doctype html><title>Foxes</title><p>The avatar's host.</p>\n")
    (images / "avatar_renard.php").write_text(SCRIPT)
    shutil.copy(release.deb(), root / "root")
    site = root / "etc" / "nginx" / "conf.d" / "avatar.conf"
    site.write_text(SITE.replace("listen 443 ssl", f"listen 127.0.0.1:{port} ssl"))
    machine.sh("rm -f /etc/apt/sources.list /etc/apt/sources.list.d/* /etc/nginx/sites-enabled/default")
    # The name is this machine's loopback, and its certificate trusted, for the guide's curl.
    shutil.copy(cafile, root / "usr" / "local" / "share" / "ca-certificates" / "avatar.crt")
    machine.sh(f"echo '127.0.0.1 {NAME}' >> /etc/hosts && update-ca-certificates >/dev/null")
    machine.sh("systemctl is-active php8.2-fpm && nginx -t -q && systemctl restart nginx")
    wait_for_port(port)
    status, location = https(port, cafile, "/avatar_renard.php")
    assert status == 302 and re.fullmatch(rf"https://{NAME}/Renard-\d+\.png", location), (status, location)
    before = own_answers(port, cafile)
    assert [answer[0] for answer in before.values()] == [200, 200, 404]
    variables = {"name": NAME, "images": "/srv/avatar"}

    with Visitors(port, cafile, path="/avatar_renard.php") as visitors:
        visitors.answered(50)
        machine.guide([f"cd /root && {INSTALL[0]}"], **variables)
        machine.guide(INSTALL[1:3], **variables)
        assert machine.sh(INSTALL[3].removeprefix("sudo ")).stdout.startswith("HTTP/1.1 302 Found")
        visitors.answered(50)
        assert visitors.caching == {"none": visitors.answers}, "renard answered before the switch"

        text = site.read_text()
        site.write_text(text.replace("    location / {", f"    {SWITCH_LINE}\n    location / {{", 1))
        machine.guide(RELOAD)
        for _ in range(100):  # the reload returns before nginx's new workers answer
            # The guide's check, with the name resolving to loopback and the site's port.
            answer = machine.sh(CHECK[0], name=f"{NAME}:{port}").stdout
            if "cache-control: no-store" in answer.lower():  # HTTP/2 names headers in lower case
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the switched location did not answer within 20 s; it answered:\n{answer}")
        visitors.answered(50)

        assert PHP_LOCATION in site.read_text()
        site.write_text(site.read_text().replace(PHP_LOCATION, ""))
        machine.guide(RELOAD)
        machine.guide(PURGE, **variables)
        visitors.answered(50)

    assert visitors.failures == [], f"{len(visitors.failures)} failed of {visitors.answers}: {visitors.failures[:5]}"
    assert visitors.caching["none"] >= 100 and visitors.caching["no-store"] >= 100, visitors.caching
    assert set(visitors.caching) == {"none", "no-store"}  # PHP's answers, then renard's only
    left = machine.sh("dpkg-query -W -f '${db:Status-Abbrev} ${Package}\\n' 'php*' 2>/dev/null || true").stdout
    assert not [line for line in left.splitlines() if line.startswith("ii")], left  # no PHP package installed
    assert machine.sh("cat /proc/[0-9]*/comm 2>/dev/null || true").stdout.split().count("php-fpm8.2") == 0  # none runs
    assert not (images / "avatar_renard.php").exists()
    assert own_answers(port, cafile) == before
    print(f"php move: {visitors.answers} answers to /avatar_renard.php across the move, 0 failed: {visitors.caching}")
