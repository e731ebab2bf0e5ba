"""deploy/install, as deploy/README.md runs it, into a temporary root: what it writes (the
config with the image folder, not a count; both units; the HTTPS site for the name and
certificate), its errors, that systemd accepts the installed units, and the installed files
at work: the socket as renard.socket makes it, renard started as renard.service starts it
(through systemd-socket-activate), nginx with the installed site, visited over HTTPS on
IPv4 and IPv6; a 22nd image appears after `systemctl reload renard`'s signal, on a
connection opened before it."""

import os
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

from http_client import Client
from stack import (
    Notifications,
    activated,
    free_port,
    held_tcp_socket,
    held_unix_socket,
    nginx_conf,
    self_signed,
    substitute,
    tls_context,
    wait_for_port,
)

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


def test_a_second_install_keeps_edited_files_and_writes_the_new_ones_beside_them(images, tmp_path):
    installed(tmp_path, images)
    config, site = tmp_path / "etc/renard/renard.conf", tmp_path / "etc/nginx/conf.d/renard.conf"
    unit = tmp_path / "etc/systemd/system/renard.socket"
    config.write_text(config.read_text() + "RENARD_COUNT=3\n")
    site.write_text(site.read_text() + "# the administrator's line\n")
    untouched = unit.read_text()
    args = ["--server-name", NAME, "--images", str(images), "--root", str(tmp_path)]
    tls = ["--certificate", f"/etc/ssl/{NAME}/cert.pem", "--key", f"/etc/ssl/{NAME}/key.pem"]
    result = install(*args, *tls)
    assert result.returncode == 0, result.stderr
    assert config.read_text().endswith("RENARD_COUNT=3\n") and site.read_text().endswith("the administrator's line\n")
    assert "RENARD_COUNT=3" not in (tmp_path / "etc/renard/renard.conf.new").read_text()
    assert (tmp_path / "etc/nginx/conf.d/renard.conf.new").is_file()
    assert unit.read_text() == untouched and not (tmp_path / "etc/systemd/system/renard.socket.new").exists()
    said = [line for line in result.stdout.splitlines() if line.startswith("install: kept your ")]
    assert sorted(said)[0].startswith("install: kept your /etc/nginx/conf.d/renard.conf ") and len(said) == 2


@pytest.mark.parametrize("extension", ["jpg", "webp", "avif", "svg"])
def test_images_of_another_kind_are_counted_and_named_by_their_extension(extension, tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    for k in range(1, 4):
        (folder / f"Renard-{k}.{extension}").write_bytes(b"an image")
    (folder / "Renard-4.png").write_bytes(b"another kind: not counted")
    root = tmp_path / "root"
    tls = root / "etc/ssl" / NAME
    tls.mkdir(parents=True)
    cert, key = (Path("/") / path.relative_to(root) for path in self_signed(tls))
    args = ["--server-name", NAME, "--images", str(folder), "--certificate", str(cert), "--key", str(key)]
    result = install(*args, "--root", str(root))
    assert result.returncode == 0, result.stderr
    assert f": 3 images now in {folder} " in result.stdout
    config = (root / "etc/renard/renard.conf").read_text()
    assert f"RENARD_LOCATION=https://{NAME}/Renard-{{n}}.{extension}\n" in config


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


def unit_value(unit: str, key: str) -> str:
    match = re.search(rf"^{key}=(.*)$", unit, re.M)
    assert match, f"no {key}= in the unit"
    return match.group(1)


def curl_https(host: str, port: int, cert: Path, path: str) -> str:
    """The status line and headers of GET https://avatar.test:port/path, the name resolved to host."""
    result = subprocess.run(
        ["curl", "--silent", "--show-error", "--max-time", "10", "--cacert", str(cert), "--resolve"]
        + [f"{NAME}:{port}:{host}", "--output", "/dev/null", "--dump-header", "-", f"https://{NAME}:{port}{path}"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def draws(client: Client, n: int) -> set[int]:
    """The k of n unseeded visits on one connection through nginx."""
    seen = set()
    for _ in range(n):
        answer = client.get("/")
        assert answer.status == 302, answer
        seen.add(int(re.fullmatch(rf"https://{re.escape(NAME)}/Renard-(\d+)\.png", answer.headers["location"])[1]))
    return seen


@pytest.mark.parametrize("upstream", ["unix", "tcp"])
def test_the_installed_service_serves_https_and_a_22nd_image_appears_on_reload(images, tmp_path, upstream):
    root = tmp_path / "root"
    tcp = f"127.0.0.1:{free_port()}"
    cert, key = installed(root, images, *(["--upstream", tcp] if upstream == "tcp" else []))
    units = root / "etc/systemd/system"
    socket_unit, service = (units / "renard.socket").read_text(), (units / "renard.service").read_text()
    assert (unit_value(socket_unit, "SocketGroup"), unit_value(socket_unit, "SocketMode")) == ("www-data", "0660")

    # The socket where renard.socket puts it (a Unix one moved to a folder of the test's);
    # the rest of the paths are the installed files under root.
    sockets = Path(tempfile.mkdtemp(prefix="renard-sockets-"))
    os.chmod(sockets, 0o755)
    path = sockets / "renard.sock"
    shipped = unit_value(socket_unit, "ListenStream")
    https, http = free_port(), free_port()
    site = (root / "etc/nginx/conf.d/renard.conf").read_text()
    if upstream == "unix":
        site = substitute(site, f"    server unix:{shipped} ", f"    server unix:{path} ", "upstream")
        held = held_unix_socket(path)
    else:
        assert shipped == tcp and f"    server {tcp} " in site
        held = held_tcp_socket(tcp)
    for old, new in [
        ("    listen 80;", f"    listen 127.0.0.1:{http};"),
        ("    listen [::]:80;", f"    listen [::1]:{http};"),
        ("    listen 443 ssl http2;", f"    listen 127.0.0.1:{https} ssl http2;"),
        ("    listen [::]:443 ssl http2;", f"    listen [::1]:{https} ssl http2;"),
        (f"    ssl_certificate {cert};", f"    ssl_certificate {root}{cert};"),
        (f"    ssl_certificate_key {key};", f"    ssl_certificate_key {root}{key};"),
    ]:
        site = substitute(site, old, new, old.strip())
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(nginx_conf(tmp_path, tmp_path / "site.conf"))
    argv = [str(root) + arg if arg.startswith("/") else arg for arg in unit_value(service, "ExecStart").split()]
    assert argv == [f"{root}/usr/local/bin/renard", "--config", f"{root}/etc/renard/renard.conf"]

    notify = Notifications(tmp_path / "notify")
    server = activated(argv, held, notify.path, stderr=subprocess.PIPE, text=True)
    nginx = subprocess.Popen(["nginx", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")])
    try:
        wait_for_port(https)
        for host in ("127.0.0.1", "::1"):  # the first visit starts renard (socket activation)
            answer = curl_https(host, https, root / cert.relative_to("/"), "/")
            assert answer.startswith("HTTP/2 302") and f"location: https://{NAME}/Renard-" in answer
        notify.expect("READY=1")

        kept = Client(https, tls=tls_context(root / cert.relative_to("/")))
        assert draws(kept, 300) <= set(range(1, 22))
        (images / "Renard-22.png").write_bytes(tiny_png(250))
        # The command line as systemd reads it: quoted words, ${MAINPID} (or $MAINPID) substituted.
        line = unit_value(service, "ExecReload").replace("${MAINPID}", str(server.pid))
        reload = shlex.split(line.replace("$MAINPID", str(server.pid)))
        subprocess.run(reload, check=True)
        seen = notify.expect("READY=1")
        assert seen[0] == "RELOADING=1", seen
        assert 22 in draws(kept, 600)  # missed in 600 draws of 22: probability 7e-13
        image = kept.get("/Renard-22.png")
        assert (image.status, image.body) == (200, tiny_png(250))
        assert image.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert kept.connections == 1  # no connection dropped by the reload
        server.terminate()
        notify.expect("STOPPING=1")
        assert server.wait(timeout=10) == 0
        # One operator's line for the one reload (in the journal, under systemd).
        reloaded = [line for line in server.stderr.read().splitlines() if line.startswith("renard: reloaded")]
        assert len(reloaded) == 1, reloaded
        assert reloaded[0].startswith(f"renard: reloaded: N 21 -> 22 (images in {images}), location unchanged, ")
    finally:
        for proc in (nginx, server):
            proc.terminate()
            proc.wait(timeout=10)
        held.close()
        notify.close()
        shutil.rmtree(sockets)


def test_snippet_writes_the_avatar_for_an_existing_server_block_and_no_site(tmp_path, images):
    """--snippet: deploy/nginx's two files where the package puts them, the upstream's address
    written in (TCP here), no whole site, no certificate needed, no renewal hook."""
    result = install(
        "--snippet", "--server-name", NAME, "--images", str(images), "--upstream", "127.0.0.1:8099",
        "--root", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "location = / { include snippets/renard.conf; }" in result.stdout
    snippet = (tmp_path / "etc/nginx/snippets/renard.conf").read_text()
    assert snippet == (REPO / "deploy/nginx/renard.conf").read_text()
    http = (tmp_path / "etc/nginx/conf.d/renard-http.conf").read_text()
    assert "    server 127.0.0.1:8099 max_fails=1 fail_timeout=2s;\n" in http and "unix:" not in http
    assert not (tmp_path / "etc/nginx/conf.d/renard.conf").exists()
    assert not (tmp_path / "etc/letsencrypt").exists()
    assert (tmp_path / "etc/systemd/system/renard.socket").read_text().count("ListenStream=127.0.0.1:8099") == 1
