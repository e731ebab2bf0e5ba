"""peers/nginx-split/run: the split_clients tables it writes are uniform to one step and
cover 100 %, any SPEC §1 location reaches the wire unchanged through nginx (its `$`, quotes
and backslashes included), and bad input is one line with exit status 2.
Run: python3 -m unittest -q test_run (in this folder; the live case needs nginx)."""
import importlib.machinery
import importlib.util
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
loader = importlib.machinery.SourceFileLoader("nginx_split_run", str(HERE / "run"))
run = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
loader.exec_module(run)


def steps(share: str) -> int:
    whole, hundredths = share.rstrip("%").split(".")
    return int(whole) * 100 + int(hundredths)


class Percentages(unittest.TestCase):
    def test_shares_differ_by_at_most_one_step_and_the_rest_goes_to_the_last(self):
        for count in (1, 2, 3, 7, 21, 100, 9999, 10000):
            shares = run.percentages(count)
            self.assertEqual(len(shares), count)
            self.assertEqual(shares[-1], "*")
            explicit = [steps(s) for s in shares[:-1]]
            last = run.STEPS - sum(explicit)
            self.assertLessEqual(max(explicit + [last]) - min(explicit + [last]), 1, count)

    def test_twenty_one_images_get_476_or_477_hundredths_of_a_percent(self):
        self.assertEqual(set(run.percentages(21)[:-1]), {"4.76%", "4.77%"})


class BadInput(unittest.TestCase):
    def call(self, count: str, location: str) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as tmp:
            return subprocess.run([str(HERE / "run"), tmp, count, location, "unused.conf"], capture_output=True, text=True, timeout=10)

    def test_a_count_past_split_clients_resolution_is_refused(self):
        p = self.call("10001", "https://x/{n}")
        self.assertEqual((p.returncode, p.stderr.count("\n")), (2, 1))
        self.assertIn("--count", p.stderr)

    def test_a_location_without_n_is_refused(self):
        p = self.call("21", "https://x/")
        self.assertEqual((p.returncode, p.stderr.count("\n")), (2, 1))
        self.assertIn("--location", p.stderr)


@unittest.skipUnless(shutil.which("nginx"), "nginx is not installed (apt: nginx-light)")
class OnTheWire(unittest.TestCase):
    def test_every_visible_ascii_location_reaches_the_wire_unchanged(self):
        template = "https://x/$a\"b'c\\d;e{f}g%h/{n}.png?i=$j"
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp).chmod(0o755)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            config = (HERE / "nginx.conf.in").read_text()
            for name, value in (("tmp", tmp), ("threads", "1"), ("listen", f"127.0.0.1:{port}")):
                config = config.replace("{{" + name + "}}", value)
            (Path(tmp) / "nginx.conf").write_text(config)
            nginx = subprocess.Popen([str(HERE / "run"), tmp, "3", template, str(Path(tmp) / "nginx.conf")])
            try:
                answers = [self.get(port, "/"), self.get(port, "/?seed=fox"), self.get(port, "/?seed=fox")]
            finally:
                nginx.terminate()
                nginx.wait(10)
        pattern = re.escape(template).replace(re.escape("{n}"), "([123])")
        locations = []
        for head in answers:
            self.assertTrue(head.startswith("HTTP/1.1 302"), head)
            location = re.search(r"\r\nLocation: ([^\r]*)\r\n", head).group(1)
            self.assertRegex(location, "^" + pattern + "$")
            locations.append(location)
        self.assertEqual(locations[1], locations[2])  # a seed always picks the same image

    def get(self, port: int, target: str) -> str:
        deadline = time.monotonic() + 10
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        with conn:
            conn.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := conn.recv(4096):
                data += chunk
        return data.decode("latin-1")


if __name__ == "__main__":
    unittest.main()
