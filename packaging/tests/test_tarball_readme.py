"""The tarball's README is the self-hoster's page (packaging/tarball/README.md), and what it says
holds in the tarball it ships in: every relative link opens a file of the tarball, the files
table names every file there, every flag it names is renard's, and its commands run as written:
"Check the download" and "Try it" here, "Install by hand", "Check it runs", "Upgrade" (to the
next version's tarball, under load) and "Remove" in a booted Debian 12 (booted.py).

The commands are read from the README's own sh blocks, so the page and the test cannot drift
apart. What the test changes and the README does not say: `sudo ` is dropped (the test is
root); "Try it" listens on a free port, not 8080, and the site on free ports, not 80 and 443
(this machine is shared); the two lines that need the internet (NEEDS_NETWORK) are not run:
nginx-light is in the machine already, and a self-signed certificate stands where certbot
puts one; the HTTPS check is made from here, the name resolved to loopback."""

import os
import re
import shutil
import tarfile

import pytest
from booted import NAME, booted, certificate, free_port, https, served_throughout, wait_for_port
from test_docs import FLAG, options_in_help

from conftest import HOST, REPO, run

TEMPLATE = REPO / "packaging" / "tarball" / "README.md"
MACHINE = "renard-tarball-test"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# The install's lines that reach the internet: the machine is offline.
NEEDS_NETWORK = [
    "sudo apt-get install -y nginx-light certbot",
    'sudo certbot certonly --webroot -w /var/www/html -d "$name" --deploy-hook "systemctl reload nginx"',
]
SITE_WRITTEN = "| sudo tee /etc/nginx/conf.d/renard.conf >/dev/null"
# Where the install puts the tarball's completions: the /usr/local counterparts of the package's.
COMPLETIONS = {
    "completions/renard.bash": "/usr/local/share/bash-completion/completions/renard",
    "completions/_renard": "/usr/local/share/zsh/site-functions/_renard",
    "completions/renard.fish": "/usr/local/share/fish/vendor_completions.d/renard.fish",
}


def sections(text: str) -> dict[str, str]:
    """The README's '## ' sections by heading."""
    parts = re.split(r"^## (.+)\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def commands(section: str) -> list[str]:
    """The lines of a section's sh blocks, comment-only and blank lines left out."""
    blocks = re.findall(r"^```sh\n(.*?)^```$", section, flags=re.M | re.S)
    lines = [line for block in blocks for line in block.splitlines()]
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def as_root(lines: list[str]) -> str:
    """The lines as one script, typed by root: sudo dropped."""
    return "\n".join(line.replace("sudo ", "") for line in lines)


def homepage(release) -> str | None:
    """The package's Homepage: field (RENARD_HOMEPAGE at build time), or None."""
    control = run("dpkg-deb", "--field", release.deb(), "Homepage").stdout.strip()
    return control or None


@pytest.fixture(scope="module")
def readme(unpacked) -> str:
    return (unpacked(HOST) / "README.md").read_text()


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_readme_is_the_tarballs_own_with_the_projects_address(release, arch):
    with tarfile.open(release.tarball(arch)) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/README.md"))
        text = archive.extractfile(member).read().decode()
    before, after = TEMPLATE.read_text().split("@HOMEPAGE@")
    assert text.startswith(before) and text.endswith(after), "README.md is not packaging/tarball/README.md"
    address = text[len(before) : len(text) - len(after)]
    if homepage(release):
        assert address == homepage(release)
    else:
        assert "RENARD_HOMEPAGE" in address and "://" not in address, address


def test_every_relative_link_opens_a_file_of_the_tarball(unpacked, readme):
    top = unpacked(HOST)
    targets = [t for t in LINK.findall(readme) if not re.match(r"[a-z]+:", t)]
    assert len(targets) >= 8, targets
    paths = {t: (top / t.split("#")[0]).resolve() for t in targets}
    dead = [t for t, path in paths.items() if not path.is_relative_to(top.resolve()) or not path.exists()]
    assert dead == [], f"links to nothing in the tarball: {dead}"


def test_the_files_table_names_every_file_of_the_tarball_and_no_other(unpacked, readme):
    top = unpacked(HOST)
    table = sections(readme)["The files here"]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
    named = {code for cell in rows for code in re.findall(r"`([^`]+)`", cell)} | set(LINK.findall(table))
    shipped = {str(p.relative_to(top)) for p in top.iterdir()} - {"README.md"}
    shipped = {f"{name}/" if (top / name).is_dir() else name for name in shipped}
    assert named == shipped


def test_every_flag_it_names_is_a_flag_of_renard(readme, help_text):
    flags = set(FLAG.findall(sections(readme)["The flags, in short"]))
    assert len(flags) >= 10, flags
    assert flags <= options_in_help(help_text)


def test_check_the_download_runs_as_written(release, readme, tmp_path):
    if not (release.dir / "SHA256SUMS.asc").is_file():
        pytest.skip("this release is not signed (make test-release signs it with the test key)")
    for name in ["SHA256SUMS", "SHA256SUMS.asc", "renard-archive-keyring.gpg", release.tarball(HOST).name]:
        shutil.copy(release.dir / name, tmp_path / name)
    block = commands(sections(readme)["Check the download"])
    checked = run("sh", "-ec", as_root(block), cwd=tmp_path)
    assert checked.stdout == f"{release.tarball(HOST).name}: OK\n"


def test_try_it_runs_as_written(unpacked, readme):
    block = commands(sections(readme)["Try it"])
    port = free_port()
    script = as_root(block).replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    tried = run("sh", "-ec", script, cwd=unpacked(HOST), timeout=60)
    head = tried.stdout.replace("\r\n", "\n")
    assert head.startswith("HTTP/1.1 302 Found\n"), tried.stdout + tried.stderr
    assert re.search(r"^Location: https://avatar\.example\.org/Renard-([1-9]|1\d|2[01])\.png$", head, re.M), head


def sh_in(machine, folder: str, lines: list[str]) -> str:
    """lines as one script (one shell, as a user types them) in folder of the machine, as root."""
    return machine.sh(f"cd {folder}\n{as_root(lines)}").stdout


def unpack_into(machine, release, name: str) -> str:
    """release's tarball for this machine, copied into root's home and unpacked there as the README
    says (tar -xzf); its folder."""
    tarball = release.tarball(HOST)
    shutil.copy(tarball, REPO / "results" / "boot" / name / "root" / tarball.name)
    machine.sh(f"cd /root && tar -xzf {tarball.name}")
    return "/root/" + tarball.name.removesuffix(".tar.gz")


def test_install_check_upgrade_and_remove_by_hand_as_written(release, bumped_release, readme, tmp_path):
    page = sections(readme)
    install = commands(page["Install by hand"])
    assert [line for line in NEEDS_NETWORK if line not in install] == [], "the README no longer says these"
    assert install[0] == f"name={NAME}                        # your site's name"
    https_port, http_port = free_port(), free_port()
    ports = (
        f"sed -i -e 's/listen 443 /listen {https_port} /; s/listen \\[::\\]:443 /listen [::]:{https_port} /'"
        f" -e 's/listen 80;/listen {http_port};/; s/listen \\[::\\]:80;/listen [::]:{http_port};/'"
        " /etc/nginx/conf.d/renard.conf"
    )
    site = next(i for i, line in enumerate(install) if line.endswith(SITE_WRITTEN))
    offline = [line for line in install[: site + 1] if line not in NEEDS_NETWORK] + [ports, *install[site + 1 :]]

    with booted(MACHINE) as machine:
        root = REPO / "results" / "boot" / MACHINE
        cafile = certificate(tmp_path)
        live = root / "etc" / "letsencrypt" / "live" / NAME
        live.mkdir(parents=True)
        for pem in ["fullchain.pem", "privkey.pem"]:
            shutil.copy(tmp_path / pem, live / pem)
        for n in (1, 2, 3):
            (root / "root" / f"Renard-{n}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([n]) * 64)

        folder = unpack_into(machine, release, MACHINE)
        sh_in(machine, folder, offline)
        wait_for_port(https_port)  # systemctl reload returns before nginx's master has bound the new ports
        status, location = https(https_port, cafile, "/")
        assert status == 302 and re.fullmatch(rf"https://{re.escape(NAME)}/Renard-[123]\.png", location), location
        assert https(https_port, cafile, location.removeprefix(f"https://{NAME}"))[0] == 200
        for shipped, installed in COMPLETIONS.items():
            assert machine.sh(f"cmp {folder}/{shipped} {installed}", check=False).returncode == 0, installed
        assert machine.sh("systemctl show -p ExecStart --value renard.service").stdout.startswith(
            "{ path=/usr/local/bin/renard ; argv[]=/usr/local/bin/renard --config /etc/renard/renard.conf"
        )

        check = commands(page["Check it runs"])
        assert check[-1].startswith('curl -sI "https://$name/"'), "the HTTPS check is made from here, above"
        assert sh_in(machine, folder, check[:-1]) == "active\nactive\nok\n"

        before = machine.sh("systemctl show -p MainPID --value renard.service").stdout.strip()
        upgraded = unpack_into(machine, bumped_release, MACHINE)
        served_throughout(https_port, cafile, lambda: sh_in(machine, upgraded, commands(page["Upgrade"])))
        assert machine.sh("/usr/local/bin/renard --version").stdout.startswith(
            f"renard {bumped_release.crate_version} "
        )
        after = machine.sh("systemctl show -p MainPID --value renard.service").stdout.strip()
        assert after not in ("0", before), "the upgrade did not restart renard.service"

        sh_in(machine, upgraded, commands(page["Remove"]))
        left = machine.sh(
            "find / -xdev \\( -path /proc -o -path /sys -o -path /root \\) -prune -o -name '*renard*' -print"
        ).stdout.split()
        assert left == [], f"files left after the removal: {left}"
        assert machine.sh("getent passwd renard", check=False).returncode == 2, "the user renard is still there"
        assert machine.sh("systemctl is-active nginx").stdout.strip() == "active"


def test_release_refuses_an_address_it_cannot_write_before_building_anything(tmp_path):
    out = tmp_path / "out"
    refused = run(
        REPO / "packaging" / "release", "--out", out, env={**os.environ, "RENARD_HOMEPAGE": "https://a|b"}, check=False
    )
    assert refused.returncode == 2
    assert refused.stderr.endswith(
        'release: RENARD_HOMEPAGE: an https:// address without spaces, | or & (got "https://a|b")\n'
    )
    assert not out.exists(), "the release began before refusing"
