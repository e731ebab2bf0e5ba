"""The deployed path under a booted systemd: a Debian 12 machine (scripts/rootfs: systemd,
Debian's nginx-light, openssl, curl) run by systemd-nspawn --boot (scripts/boot), where
deploy/install installs renard from this repository as README's "from source" path does,
renard.socket and the hardened renard.service start, and nginx serves the site. The machine
shares this machine's network, so the tests visit nginx on loopback as a visitor would.

One machine for the module (about 5 s to boot and set up once its tarball is cached; the
first run builds the tarball from the Debian archive, about 90 s). The tests run in order:
the certificate renewal last, since it replaces the certificate that the others trust."""

import http.client
import os
import re
import shutil
import socket
import ssl
import subprocess
import time
import types
from pathlib import Path

import pytest

from booted_nginx import booted
from load import Load
from stack import free_port, self_signed, substitute

REPO = Path(__file__).resolve().parents[2]
NAME = "deploy-booted"
PACKAGES = ["systemd", "systemd-sysv", "dbus", "nginx-light", "openssl", "curl"]
MACHINE = REPO / "results" / "boot" / NAME  # the machine's root, as this machine sees it
LIVE = "/etc/letsencrypt/live/avatar.test"  # where certbot would put the certificate
IMAGES = 21
TRUSTED = REPO / "results" / "boot" / f"{NAME}-trusted.pem"  # the certificate visitors trust

if os.geteuid() != 0 or not shutil.which("systemd-nspawn") or not shutil.which("mmdebstrap"):
    pytest.skip(
        "booting a machine needs root, systemd-nspawn and mmdebstrap (scripts/apt.txt)", allow_module_level=True
    )


def run(command: str, check: bool = True) -> subprocess.CompletedProcess:
    """command run by bash inside the machine, as root."""
    result = subprocess.run(
        [str(REPO / "scripts/boot"), "run", NAME, "bash", "-c", command], capture_output=True, text=True, timeout=120
    )
    assert not check or result.returncode == 0, f"{command}: {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def host(path: str) -> Path:
    """A path of the machine, as this machine sees it."""
    return MACHINE / path.lstrip("/")


def png(k: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + f"renard {k}".encode()


@pytest.fixture(scope="module")
def machine(renard):
    try:
        with booted(NAME, [NAME, *PACKAGES]):
            yield set_up()
    finally:
        TRUSTED.unlink(missing_ok=True)


def set_up() -> types.SimpleNamespace:
    """Images, a certificate where certbot puts it, deploy/install, the site on free loopback
    ports; renard.socket enabled and nginx restarted. The machine: its ports and the
    certificate a visitor trusts."""
    images = host("/srv/avatar")
    images.mkdir(parents=True)
    for k in range(1, IMAGES + 1):
        (images / f"Renard-{k}.png").write_bytes(png(k))
    live = host(LIVE)
    live.mkdir(parents=True)
    cert, key = self_signed(live)
    cert.rename(live / "fullchain.pem")
    key.rename(live / "privkey.pem")
    run("/repo/deploy/install --server-name avatar.test --images /srv/avatar")
    port, http_port = free_port(), free_port()
    site = host("/etc/nginx/conf.d/renard.conf")
    text = site.read_text()
    text = substitute(text, "    listen 80;", f"    listen 127.0.0.1:{http_port};", "listen 80")
    text = substitute(text, "    listen [::]:80;", f"    listen [::1]:{http_port};", "listen [::]:80")
    text = substitute(text, "    listen 443 ssl http2;", f"    listen 127.0.0.1:{port} ssl http2;", "443")
    text = substitute(text, "    listen [::]:443 ssl http2;", f"    listen [::1]:{port} ssl http2;", "[::]:443")
    site.write_text(text)
    run("systemctl daemon-reload && systemctl enable --now renard.socket && nginx -t -q && systemctl restart nginx")
    shutil.copy(live / "fullchain.pem", TRUSTED)
    return types.SimpleNamespace(port=port, http_port=http_port, tls=lambda: ssl.create_default_context(cafile=TRUSTED))


def get(machine, path: str, conn: http.client.HTTPSConnection | None = None) -> http.client.HTTPResponse:
    conn = conn or http.client.HTTPSConnection("127.0.0.1", machine.port, timeout=10, context=machine.tls())
    conn.request("GET", path)
    answer = conn.getresponse()
    answer.read()
    return answer


def k_of(answer: http.client.HTTPResponse) -> int:
    match = re.fullmatch(r"https://avatar\.test/Renard-(\d+)\.png", answer.getheader("Location", ""))
    assert answer.status == 302 and match, (answer.status, answer.getheader("Location"))
    return int(match[1])


def main_pid() -> int:
    return int(run("systemctl show -P MainPID renard").stdout)


def test_nginx_answers_over_https_through_the_socket_and_serves_the_image(machine):
    k = k_of(get(machine, "/?seed=alice"))
    image = get(machine, f"/Renard-{k}.png")
    assert image.status == 200 and image.getheader("Content-Type") == "image/png"
    assert image.getheader("Strict-Transport-Security") == "max-age=63072000"
    for address in ("127.0.0.1", "[::1]"):
        out = run(
            f"curl -sS --http2 -k -o /dev/null -w '%{{http_version}} %{{http_code}}' https://{address}:{machine.port}/"
        )
        assert out.stdout == "2 302"
    assert run("systemctl is-active renard.socket renard.service nginx").stdout.split() == ["active"] * 3


def test_the_hardened_unit_is_the_one_running(machine):
    get(machine, "/")  # renard runs: the socket started it
    shown = run(
        "systemctl show renard -p PrivateNetwork -p RestrictAddressFamilies -p IPAddressDeny -p PrivateUsers"
        " -p PrivateMounts -p RemoveIPC -p User -p NoNewPrivileges -p CPUSchedulingPolicy"
    ).stdout
    properties = dict(line.split("=", 1) for line in shown.splitlines())
    properties["IPAddressDeny"] = " ".join(sorted(properties["IPAddressDeny"].split()))  # in any order
    assert properties == {
        "PrivateNetwork": "yes",
        "RestrictAddressFamilies": "AF_UNIX",
        "IPAddressDeny": "0.0.0.0/0 ::/0",
        "PrivateUsers": "yes",
        "PrivateMounts": "yes",
        "RemoveIPC": "yes",
        "User": "renard",
        "NoNewPrivileges": "yes",
        "CPUSchedulingPolicy": "3",  # SCHED_BATCH
    }
    # The filter denies @privileged and @resources: chown and setrlimit are not allowed.
    allowed = run("systemctl show -P SystemCallFilter renard").stdout.split()
    assert "accept4" in allowed and "chown" not in allowed and "setrlimit" not in allowed
    # And the kernel says the process runs so: namespaces of its own, a seccomp filter.
    pid = main_pid()
    for namespace in ("net", "user", "mnt"):
        mine, pid1 = run(f"readlink /proc/{pid}/ns/{namespace} /proc/1/ns/{namespace}").stdout.split()
        assert mine != pid1, namespace
    status = run(f"cat /proc/{pid}/status").stdout
    assert re.search(r"^Seccomp:\s+2$", status, re.M) and re.search(r"^NoNewPrivs:\s+1$", status, re.M)


def test_renard_in_its_own_network_reaches_nothing_yet_answers_on_the_inherited_socket(machine):
    pid = main_pid()
    inside = run(f"nsenter -t {pid} -n curl -s -m 3 http://127.0.0.1:{machine.http_port}/", check=False)
    assert inside.returncode == 7  # curl: could not connect (no network but a loopback that is down)
    assert k_of(get(machine, "/")) in range(1, IMAGES + 1)
    assert main_pid() == pid


def test_reload_recounts_the_images_on_a_connection_opened_before(machine):
    conn = http.client.HTTPSConnection("127.0.0.1", machine.port, timeout=10, context=machine.tls())
    assert max(k_of(get(machine, "/", conn)) for _ in range(50)) <= IMAGES
    pid = main_pid()
    host(f"/srv/avatar/Renard-{IMAGES + 1}.png").write_bytes(png(IMAGES + 1))
    try:
        run("systemctl reload renard")
        seen = {k_of(get(machine, "/", conn)) for _ in range(400)}  # all 400 miss k=22: (21/22)^400 < 1e-8
        assert IMAGES + 1 in seen and max(seen) == IMAGES + 1
        assert main_pid() == pid  # the same process, reloaded
    finally:
        host(f"/srv/avatar/Renard-{IMAGES + 1}.png").unlink()
        run("systemctl reload renard")
        conn.close()


def test_metrics_are_complete_under_the_sandbox(machine):
    from prometheus_client.parser import text_string_to_metric_families

    dropin = host("/etc/systemd/system/renard.service.d/metrics.conf")
    dropin.parent.mkdir(parents=True, exist_ok=True)
    dropin.write_text(
        "[Service]\nExecStart=\nExecStart=/usr/local/bin/renard --config /etc/renard/renard.conf --metrics\n"
    )
    try:
        run("systemctl daemon-reload && systemctl restart renard")
        text = run("curl -sS --unix-socket /run/renard/renard.sock http://renard/metrics").stdout
        samples = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
        # The process figures read /proc (self/stat, stat, self/fd): a ProcSubset=pid would lose
        # the start time, which needs /proc/stat's boot time.
        for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds"):
            assert samples[name] > 0, name
        assert samples["process_max_fds"] == 16384  # the unit's LimitNOFILE=
        assert samples["process_start_time_seconds"] > time.time() - 600
        assert "renard_uptime_seconds" in samples and "renard_open_connections" in samples
    finally:
        dropin.unlink()
        run("systemctl daemon-reload && systemctl restart renard")


def test_a_restart_under_load_fails_no_request(machine):
    with Load(machine, clients=4) as load:
        for _ in range(2):
            time.sleep(1.5)
            before = main_pid()
            run("systemctl restart renard")
            assert main_pid() != before
        time.sleep(1.5)
    total = sum(load.ks().values())
    assert load.failures == [], load.failures[:5]
    assert total > 100, total  # the load ran across both restarts
    print(f"booted: {total} answers through nginx across two restarts of renard, 0 failed")


def test_the_tcp_socket_variant_serves_through_the_private_network(machine):
    address = f"127.0.0.1:{free_port()}"
    socket_unit, site = host("/etc/systemd/system/renard.socket"), host("/etc/nginx/conf.d/renard.conf")
    shipped_socket, shipped_site = socket_unit.read_text(), site.read_text()
    socket_unit.write_text(
        substitute(shipped_socket, "ListenStream=/run/renard/renard.sock", f"ListenStream={address}", "ListenStream")
    )
    site.write_text(shipped_site.replace("server unix:/run/renard/renard.sock ", f"server {address} "))
    try:
        run("systemctl stop renard.service renard.socket && systemctl daemon-reload && systemctl start renard.socket")
        run("systemctl restart nginx")  # a reload's old workers would still ask the Unix socket
        assert k_of(get(machine, "/")) in range(1, IMAGES + 1)
        assert run("systemctl show -P PrivateNetwork renard").stdout.strip() == "yes"
        with socket.create_connection(tuple(address.split(":")[:1]) + (int(address.split(":")[1]),), timeout=5) as s:
            s.sendall(b"GET /?seed=bob HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert s.recv(4096).startswith(b"HTTP/1.1 302 Found\r\n")
    finally:
        socket_unit.write_text(shipped_socket)
        site.write_text(shipped_site)
        run("systemctl stop renard.service renard.socket && systemctl daemon-reload && systemctl start renard.socket")
        run("systemctl restart nginx")


def served_serial(machine) -> str:
    """The serial number of the certificate nginx presents, as openssl prints it."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", machine.port), timeout=10) as raw:
        with context.wrap_socket(raw) as tls:
            der = tls.getpeercert(binary_form=True)
    return serial_of(der, "DER")


def serial_of(certificate: bytes, form: str = "PEM") -> str:
    return (
        subprocess.run(
            ["openssl", "x509", "-inform", form, "-noout", "-serial"],
            input=certificate,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )


def test_certbots_deploy_hook_makes_nginx_serve_the_renewed_certificate(machine, tmp_path):
    hook = "/etc/letsencrypt/renewal-hooks/deploy/renard-nginx"
    old = served_serial(machine)
    assert old == serial_of(host(f"{LIVE}/fullchain.pem").read_bytes())
    # certbot renews: the new certificate and key replace the old ones on disk.
    cert, key = self_signed(tmp_path)
    shutil.copy(cert, host(f"{LIVE}/fullchain.pem"))
    shutil.copy(key, host(f"{LIVE}/privkey.pem"))
    new = serial_of(cert.read_bytes())
    assert new != old and served_serial(machine) == old  # nginx still serves the old one
    # Then certbot runs each executable file of renewal-hooks/deploy with these variables.
    out = run(f"RENEWED_LINEAGE={LIVE} RENEWED_DOMAINS=avatar.test {hook}")
    assert f"certificate renewed in {LIVE}" in out.stdout
    # nginx's reload returns before its new workers answer: ask again, 20 s at most.
    for _ in range(100):
        if served_serial(machine) == new:
            break
        time.sleep(0.2)
    assert served_serial(machine) == new
