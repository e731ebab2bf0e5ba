"""deploy/install, as the README's Deploy section runs it, into a temporary root: the unit
and site it writes are accepted by systemd and nginx, and serve the images end to end."""

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from http_client import Client
from stack import free_port, nginx_conf, wait_for_port

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "deploy" / "install"


def tiny_png(shade: int) -> bytes:
    """A valid 1 × 1 grey PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes([0, shade])))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def images():
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"renard-install-images-{os.getpid()}"
    folder.mkdir(mode=0o755, exist_ok=True)
    for k in range(1, 6):
        (folder / f"Renard-{k}.png").write_bytes(tiny_png(40 * k))
    yield folder
    shutil.rmtree(folder)


def install(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(INSTALL), *args], capture_output=True, text=True)


def test_install_writes_the_binary_unit_and_site(renard, images, tmp_path):
    result = install(
        "--server-name", "avatar.test", "--images", str(images), "--scheme", "http", "--root", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    assert "5 images" in result.stdout
    unit = (tmp_path / "etc/systemd/system/renard.service").read_text()
    assert "Environment=RENARD_COUNT=5\n" in unit
    assert "Environment=RENARD_LOCATION=http://avatar.test/Renard-{n}.png\n" in unit
    site = (tmp_path / "etc/nginx/conf.d/renard.conf").read_text()
    assert "server_name avatar.test;" in site and f"root {images};" in site
    assert (tmp_path / "usr/local/bin/renard").read_bytes() == renard.read_bytes()


@pytest.mark.parametrize(
    "args,flag",
    [
        (["--server-name", "bad name", "--images", "/"], "--server-name"),
        (["--server-name", "a.test", "--images", "/nonexistent"], "--images"),
        (["--server-name", "a.test", "--images", "/", "--scheme", "ftp"], "--scheme"),
        (["--colour", "red"], "--colour"),
    ],
)
def test_bad_flags_get_one_line_and_status_2(args, flag):
    result = install(*args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"install: {flag}")


def test_the_installed_unit_verifies_and_the_site_serves_the_images(renard, images, tmp_path):
    root = tmp_path / "root"
    assert (
        install(
            "--server-name", "avatar.test", "--images", str(images), "--scheme", "http", "--root", str(root)
        ).returncode
        == 0
    )
    unit = (root / "etc/systemd/system/renard.service").read_text()
    if shutil.which("systemd-analyze"):
        checked = tmp_path / "renard.service"
        checked.write_text(unit.replace("/usr/local/bin/renard", str(root / "usr/local/bin/renard")))
        result = subprocess.run(["systemd-analyze", "verify", str(checked)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr

    # renard as the unit starts it (its Environment lines), on a free port instead of 8080.
    env = dict(re.findall(r"^Environment=(RENARD_\w+)=(.*)$", unit, re.M))
    upstream, site_port = free_port(), free_port()
    env["RENARD_LISTEN"] = f"127.0.0.1:{upstream}"
    site = (root / "etc/nginx/conf.d/renard.conf").read_text()
    site = site.replace("server 127.0.0.1:8080", f"server 127.0.0.1:{upstream}").replace(
        "listen 80;", f"listen 127.0.0.1:{site_port};"
    )
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(nginx_conf(tmp_path, tmp_path / "site.conf"))
    with (
        subprocess.Popen([str(root / "usr/local/bin/renard")], env=env, stderr=subprocess.DEVNULL) as server,
        subprocess.Popen(
            ["nginx", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")], stderr=subprocess.DEVNULL
        ) as nginx,
    ):
        try:
            wait_for_port(upstream)
            wait_for_port(site_port)
            client = Client(site_port)
            answer = client.get("/")
            k = int(re.fullmatch(r"http://avatar\.test/Renard-(\d)\.png", answer.headers["location"]).group(1))
            image = client.get(f"/Renard-{k}.png")
            assert image.status == 200 and image.body == tiny_png(40 * k)
        finally:
            for proc in (nginx, server):
                proc.terminate()
