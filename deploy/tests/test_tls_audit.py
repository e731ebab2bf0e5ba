"""The site's TLS as an auditor scans it: testssl.sh (Debian's package) against nginx with
nginx-site.conf on loopback, with an ECDSA P-256 certificate (certbot's default key type).
One scan, about a minute here, read from its JSON findings (--jsonfile): each finding has an
id, a severity (OK, INFO, LOW, MEDIUM, HIGH, CRITICAL; WARN for the scanner's own
problems) and the text it printed."""

import json
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time

import pytest

from stack import SITE, Stack

pytestmark = pytest.mark.skipif(shutil.which("testssl") is None, reason="testssl.sh is not installed (deploy/apt.txt)")

# What testssl scans: protocols (-p), cipher categories (-s, each rated), every cipher per
# protocol (-E), forward secrecy and curves (-f), HTTP headers (-h), the known attacks (-U).
SCAN = ["-p", "-s", "-E", "-f", "-h", "-U"]
WEAK = {"LOW", "MEDIUM", "HIGH", "CRITICAL"}
TLS13_SUITES = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}


@pytest.fixture(scope="module")
def findings(renard, tmp_path_factory) -> dict[str, dict]:
    """testssl's findings by id, from one scan of the site (timeout: 10 minutes)."""
    workdir = tmp_path_factory.mktemp("tls-audit")
    report = workdir / "testssl.json"
    with Stack(renard, workdir, upstream="unix") as site:
        subprocess.run(
            ["testssl", "--quiet", "--color", "0", "--warnings", "off", "--ip", "one", "--jsonfile", str(report)]
            + [*SCAN, f"127.0.0.1:{site.port}"],
            stdout=subprocess.DEVNULL,
            timeout=600,
        )
    by_id = {f["id"]: f for f in json.loads(report.read_text())}
    assert "scanTime" in by_id, "testssl did not finish its scan"
    return by_id


def profile_suites_for_ecdsa() -> set[str]:
    """The TLS 1.2 suites of the site's ssl_ciphers that an ECDSA certificate can serve."""
    suites = re.search(r"^\s*ssl_ciphers ([^;]+);", SITE.read_text(), re.M)[1].split(":")
    return {s for s in suites if s.startswith("ECDHE-ECDSA-")}


def test_no_finding_is_rated_weak(findings):
    weak = {i: (f["severity"], f["finding"]) for i, f in findings.items() if f["severity"] in WEAK}
    assert weak == {}
    # WARN is about the scanner itself (this OpenSSL has no GOST engine), never the server.
    assert {i for i, f in findings.items() if f["severity"] == "WARN"} <= {"engine_problem"}


def test_only_tls_1_2_and_1_3_are_offered(findings):
    for old in ("SSLv2", "SSLv3", "TLS1", "TLS1_1"):
        assert findings[old]["finding"] == "not offered", old
    assert findings["TLS1_2"]["finding"] == "offered"
    assert findings["TLS1_3"]["finding"].startswith("offered")


def test_the_offered_suites_are_mozillas_intermediate_profile(findings):
    def offered(protocol: str) -> set[str]:
        return {f["finding"].split()[3] for i, f in findings.items() if i.startswith(f"cipher-{protocol}_")}

    assert offered("tls1_2") == profile_suites_for_ecdsa()
    assert offered("tls1_3") == TLS13_SUITES
    assert not any(
        i.startswith(("cipher-tls1_", "cipher-ssl")) and not i.startswith(("cipher-tls1_2", "cipher-tls1_3"))
        for i in findings
    )


def test_every_key_exchange_is_forward_secret_on_the_profiles_curves(findings):
    assert findings["PFS"]["finding"] == "offered"
    assert set(findings["PFS_ciphers"]["finding"].split()) == profile_suites_for_ecdsa() | TLS13_SUITES
    assert set(findings["PFS_ECDHE_curves"]["finding"].split()) == {"X25519", "prime256v1", "secp384r1"}
    # The cipher categories testssl rates: the weak ones are not offered at all.
    for category in ("NULL", "aNULL", "EXPORT", "LOW", "3DES_IDEA", "AVERAGE"):
        assert findings[f"cipherlist_{category}"]["finding"] == "not offered", category


def test_hsts_two_years_no_preload_and_no_version_banner(findings):
    assert findings["HSTS_time"]["severity"] == "OK"
    assert "63072000" in findings["HSTS_time"]["finding"]
    assert findings["HSTS_preload"]["finding"] == "domain is NOT marked for preloading"
    assert findings["banner_server"]["finding"] == "nginx"
    assert findings["X-Content-Type-Options"]["finding"] == "nosniff"


def test_http2_is_negotiated_and_no_session_tickets(findings):
    assert findings["ALPN_HTTP2"]["finding"] == "h2"
    assert findings["ticketbleed"]["finding"] == "no session ticket extension"


def offered_tls12_suites(port: int) -> set[str]:
    """The TLS 1.2 suites the server at 127.0.0.1:port accepts, one handshake per suite that
    this OpenSSL knows (security level 0: the weak ones too)."""
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    probe.set_ciphers("ALL:COMPLEMENTOFALL:@SECLEVEL=0")
    suites = [c["name"] for c in probe.get_ciphers() if c["protocol"] == "TLSv1.2"]
    offered = set()
    for suite in suites:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        context.minimum_version = context.maximum_version = ssl.TLSVersion.TLSv1_2
        context.set_ciphers(f"{suite}:@SECLEVEL=0")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            try:
                with context.wrap_socket(raw) as tls:
                    offered.add(tls.cipher()[0])
            except ssl.SSLError:
                pass
    return offered


def test_with_an_rsa_certificate_tls_1_2_offers_the_profiles_rsa_suites_only(renard, tmp_path):
    # An RSA certificate (certbot --key-type rsa) in place of the ECDSA one, nginx reloaded;
    # every TLS 1.2 suite this OpenSSL knows tried in turn (the site as shipped before issue
    # 38 accepted 21 of them with RSA, static-RSA key exchange and CBC among them).
    with Stack(renard, tmp_path, upstream="unix") as site:
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost"]
            + ["-keyout", str(site.key), "-out", str(site.cert)],
            check=True,
            capture_output=True,
        )
        site.nginx.send_signal(signal.SIGHUP)
        suites = re.search(r"^\s*ssl_ciphers ([^;]+);", SITE.read_text(), re.M)[1].split(":")
        expected = {s for s in suites if s.startswith("ECDHE-RSA-")}
        # Until every connection meets the reload's new worker (the old one finishes its own
        # first, and a scan's connections can meet either): 60 s at most on a busy machine.
        deadline = time.monotonic() + 60
        while (offered := offered_tls12_suites(site.port)) != expected and time.monotonic() < deadline:
            time.sleep(0.2)
        assert offered == expected
