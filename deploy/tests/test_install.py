"""deploy/install, as deploy/README.md runs it, into a temporary root: what it writes (the
config with the image folder, not a count; both units; the HTTPS site for the name and
certificate), its errors, and that systemd accepts the installed units."""

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from stack import self_signed

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "deploy" / "install"
NAME = "avatar.test"


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
    """21 images in a folder that nginx's workers (www-data) can read."""
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"renard-install-images-{os.getpid()}"
    folder.mkdir(mode=0o755, exist_ok=True)
    for k in range(1, 22):
        (folder / f"Renard-{k}.png").write_bytes(tiny_png(10 * k))
    yield folder
    shutil.rmtree(folder)


def install(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(INSTALL), *args], capture_output=True, text=True)


def installed(root: Path, images: Path, *more: str) -> tuple[Path, Path]:
    """install into root with a self-signed certificate that root holds at /etc/ssl/NAME/
    (the paths as the installed machine sees them): (certificate, key) as named there."""
    tls = root / "etc/ssl" / NAME
    tls.mkdir(parents=True)
    cert, key = (Path("/") / path.relative_to(root) for path in self_signed(tls))
    args = ["--server-name", NAME, "--images", str(images), "--certificate", str(cert), "--key", str(key)]
    result = install(*args, "--root", str(root), *more)
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout == f"installed renard for https://{NAME}/: 21 images now in {images} (counted again on reload)\n"
    )
    return cert, key


def test_install_writes_the_binary_the_config_the_units_and_the_site(renard, images, tmp_path):
    certificate = installed(tmp_path, images)
    assert (tmp_path / "usr/local/bin/renard").read_bytes() == renard.read_bytes()
    config = (tmp_path / "etc/renard/renard.conf").read_text().splitlines()
    assert config[1:] == [f"RENARD_COUNT_FROM={images}", f"RENARD_LOCATION=https://{NAME}/Renard-{{n}}.png"]
    service = (tmp_path / "etc/systemd/system/renard.service").read_text()
    assert "\nExecStart=/usr/local/bin/renard --config /etc/renard/renard.conf\n" in service
    socket_unit = (tmp_path / "etc/systemd/system/renard.socket").read_text()
    assert "\nListenStream=/run/renard/renard.sock\n" in socket_unit
    site = (tmp_path / "etc/nginx/conf.d/renard.conf").read_text()
    assert site.count(f"server_name {NAME};") == 2 and "example.org" not in site
    assert f"    ssl_certificate {certificate[0]};" in site and f"    ssl_certificate_key {certificate[1]};" in site
    assert f"    root {images};" in site and "    server unix:/run/renard/renard.sock " in site


def test_the_certificate_is_where_certbot_puts_it_by_default(images, tmp_path):
    live = tmp_path / f"etc/letsencrypt/live/{NAME}"
    live.mkdir(parents=True)
    cert, key = self_signed(tmp_path)
    cert.rename(live / "fullchain.pem")
    key.rename(live / "privkey.pem")
    result = install("--server-name", NAME, "--images", str(images), "--root", str(tmp_path))
    assert result.returncode == 0, result.stderr
    site = (tmp_path / "etc/nginx/conf.d/renard.conf").read_text()
    assert f"    ssl_certificate /etc/letsencrypt/live/{NAME}/fullchain.pem;" in site
    assert f"    ssl_certificate_key /etc/letsencrypt/live/{NAME}/privkey.pem;" in site


def test_a_tcp_upstream_goes_into_the_socket_unit_and_the_site(images, tmp_path):
    installed(tmp_path, images, "--upstream", "127.0.0.1:8081")
    assert "\nListenStream=127.0.0.1:8081\n" in (tmp_path / "etc/systemd/system/renard.socket").read_text()
    site = (tmp_path / "etc/nginx/conf.d/renard.conf").read_text()
    assert "    server 127.0.0.1:8081 max_fails=1 fail_timeout=2s;" in site and "unix:" not in site


def test_the_installed_units_verify(images, tmp_path):
    root = tmp_path / "root"
    installed(root, images)
    units = root / "etc/systemd/system"
    service = (units / "renard.service").read_text()
    (units / "renard.service").write_text(service.replace("/usr/local/bin/renard", str(root / "usr/local/bin/renard")))
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(units / "renard.socket"), str(units / "renard.service")],
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize(
    "args,flag",
    [
        (["--server-name", "bad name", "--images", "/"], "--server-name"),
        (["--server-name", "a.test", "--images", "/nonexistent"], "--images"),
        (["--server-name", "a.test", "--images", "/", "--upstream", "0.0.0.0:80"], "--upstream"),
        (["--server-name", "a.test", "--images", "/"], "--images"),  # no Renard-1.png
        (["--colour", "red"], "--colour"),
        (["--server-name"], "--server-name"),
    ],
)
def test_bad_flags_get_one_line_and_status_2(args, flag):
    result = install(*args)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"install: {flag}")


def test_a_missing_certificate_names_certbot_and_writes_nothing(images, tmp_path):
    result = install("--server-name", NAME, "--images", str(images), "--root", str(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"install: --certificate: no file /etc/letsencrypt/live/{NAME}/fullchain.pem")
    assert "certbot certonly" in result.stderr
    assert list(tmp_path.iterdir()) == []
