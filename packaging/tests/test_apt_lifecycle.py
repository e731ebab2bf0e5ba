"""The self-hoster's whole life through apt, in a booted Debian 12 with systemd as PID 1
(scripts/boot; it shares this machine's loopback): the repository dist/apt served over HTTP on
loopback, added with signed-by= and installed as deploy/README.md's "Day 2" says, the images in
place, nginx over HTTPS in front; then the next version published into the repository and
`apt-get upgrade` while visitors load nginx (0 failed requests: the socket stays, the service
restarts); the rollback; the purge, after which no renard file remains and nginx is not broken.

Each command of the guide is run as written (`sudo ` dropped: the test is root), with `repo`
and `name` set; test_the_guide_holds_every_command_the_test_runs ties the two together. What
the test changes and the guide does not say: the machine's own Debian sources are removed (it
is offline: only renard's repository is reachable), and the site's ports 80 and 443 become free
ports of this shared machine."""

import shutil

import pytest
from apt_client import served
from booted import NAME, booted, certificate, free_port, https, served_throughout, wait_for_port

from conftest import REPO, TEST_GNUPG, run, signing_env

GUIDE = REPO / "deploy" / "README.md"
MACHINE = "renard-apt-test"
# deploy/README.md, "Day 2", as written there.
INSTALL = [
    'sudo curl -fsSL -o /usr/share/keyrings/renard-archive-keyring.gpg "$repo/renard-archive-keyring.gpg"',
    'echo "deb [signed-by=/usr/share/keyrings/renard-archive-keyring.gpg] $repo stable main"'
    " | sudo tee /etc/apt/sources.list.d/renard.list",
    "sudo apt-get update && sudo apt-get install -y renard nginx-light",
]
IMAGES = [
    "sudo mkdir -p /srv/avatar && sudo cp Renard-*.png /srv/avatar/",
    'sudo sed -i "s|^RENARD_LOCATION=.*|RENARD_LOCATION=https://$name/Renard-{n}.png|" /etc/renard/renard.conf',
    "sudo systemctl restart renard",
]
SITE = [
    'sed "s/avatar\\.example\\.org/$name/g" /usr/share/doc/renard/examples/nginx-site.conf'
    " | sudo tee /etc/nginx/conf.d/renard.conf",
    "sudo nginx -t && sudo systemctl reload nginx",
]
UPGRADE = ["sudo apt-get update && sudo apt-get upgrade -y"]
ROLLBACK = ['sudo apt-get install -y --allow-downgrades "renard=$previous"']
UNINSTALL = [
    "sudo apt-get purge -y renard",
    "sudo rm /etc/nginx/conf.d/renard.conf && sudo nginx -t && sudo systemctl reload nginx",
    "sudo rm /etc/apt/sources.list.d/renard.list /usr/share/keyrings/renard-archive-keyring.gpg",
]


def test_the_guide_holds_every_command_the_test_runs():
    guide = GUIDE.read_text()
    for line in [*INSTALL, *IMAGES, *SITE, *UPGRADE, *ROLLBACK, *UNINSTALL]:
        assert line in guide, f"deploy/README.md does not say: {line}"


@pytest.fixture
def machine():
    with booted(MACHINE) as machine:
        yield machine


def test_install_upgrade_under_load_rollback_and_purge_through_apt(machine, release, bumped_release, tmp_path):
    repository = tmp_path / "apt"
    shutil.copytree(release.dir / "apt", repository)
    machine_root = REPO / "results" / "boot" / MACHINE
    https_port, http_port = free_port(), free_port()
    cafile = certificate(tmp_path)
    live = machine_root / "etc" / "letsencrypt" / "live" / NAME
    live.mkdir(parents=True)
    for pem in ["fullchain.pem", "privkey.pem"]:
        shutil.copy(tmp_path / pem, live / pem)
    # The machine is offline: its Debian sources go; renard's repository is all it reaches.
    machine.sh("rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*")
    images = machine_root / "root"
    for n in (1, 2, 3):
        (images / f"Renard-{n}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([n]) * 64)

    with served(repository) as repo:
        machine.guide(INSTALL, repo=repo)
        assert machine.sh("dpkg-query -W -f '${Version}' renard").stdout == release.version
        assert machine.sh("systemctl is-active renard.socket").stdout.strip() == "active"
        machine.guide([f"cd /root && {line}" if "Renard-*" in line else line for line in IMAGES], name=NAME)
        machine.guide(SITE[:1], name=NAME)
        machine.sh(
            f"sed -i -e 's/listen 443 /listen {https_port} /; s/listen \\[::\\]:443 /listen [::]:{https_port} /'"
            f" -e 's/listen 80;/listen {http_port};/; s/listen \\[::\\]:80;/listen [::]:{http_port};/'"
            " /etc/nginx/conf.d/renard.conf"
        )
        machine.guide(SITE[1:], name=NAME)
        wait_for_port(https_port)  # systemctl reload returns before nginx's master has bound the new ports
        status, location = https(https_port, cafile, "/")
        assert status == 302 and location.startswith(f"https://{NAME}/Renard-"), (status, location)
        assert https(https_port, cafile, location.removeprefix(f"https://{NAME}"))[0] == 200
        before = machine.sh("systemctl show -p MainPID --value renard.service").stdout.strip()

        # The next version, published into the served repository as the release workflow does.
        key = signing_env()["RENARD_SIGNING_KEY"]
        run(REPO / "packaging" / "apt-repo", "--dir", repository, "--key", key, bumped_release.deb(),
            env={**signing_env(), "GNUPGHOME": str(TEST_GNUPG)})  # fmt: skip
        served_throughout(https_port, cafile, lambda: machine.guide(UPGRADE))
        assert machine.sh("dpkg-query -W -f '${Version}' renard").stdout == bumped_release.version
        assert machine.sh("renard --version").stdout.startswith(f"renard {bumped_release.crate_version} ")
        after = machine.sh("systemctl show -p MainPID --value renard.service").stdout.strip()
        assert after not in ("0", before), "the upgrade did not restart renard.service"

        machine.guide(ROLLBACK, previous=release.version)
        assert machine.sh("dpkg-query -W -f '${Version}' renard").stdout == release.version
        assert https(https_port, cafile, "/")[0] == 302

        machine.guide(UNINSTALL)
    left = machine.sh(
        "find / -xdev \\( -path /proc -o -path /sys -o -path /var/lib/apt/lists -o -path /var/cache/apt \\) -prune"
        " -o -name '*renard*' -print"
    ).stdout.split()
    assert left == [], f"files left after the purge: {left}"
    assert machine.sh("systemctl is-active nginx").stdout.strip() == "active"
