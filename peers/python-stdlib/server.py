"""renard as a Python user writes it with no dependency: http.server's ThreadingHTTPServer and
a BaseHTTPRequestHandler whose do_GET sends a 302 (HTTP/1.1, so connections are kept alive).
?seed= through urllib.parse.parse_qs.

Usage: python3 server.py HOST PORT COUNT LOCATION   (LOCATION contains {n})
"""

import random
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def fnv1a64(octets: bytes) -> int:
    h = FNV_OFFSET
    for octet in octets:
        h = ((h ^ octet) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


class Avatar(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer then carries Content-Length
    count: int
    location: str

    def do_GET(self):
        target = urlsplit(self.path)
        if target.path != "/":
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        seeds = parse_qs(target.query, keep_blank_values=True, errors="surrogateescape").get("seed")
        if seeds is None:
            k = random.randrange(self.count) + 1  # uniform in 1..count
        else:
            k = fnv1a64(seeds[0].encode(errors="surrogateescape")) % self.count + 1
        self.send_response(HTTPStatus.FOUND)
        self.send_header("Location", self.location.replace("{n}", str(k)))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        """No line per request on stderr (the documented hook; the default logs every one)."""


def main():
    host, port, count, location = sys.argv[1:]
    Avatar.count, Avatar.location = int(count), location
    with ThreadingHTTPServer((host, int(port)), Avatar) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
