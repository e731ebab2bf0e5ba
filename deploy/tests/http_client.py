"""A keep-alive HTTP/1.1 client over http.client, for tests that count every request."""

import http.client
import ssl
from dataclasses import dataclass


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


class Client:
    """One keep-alive connection to host:port (HTTPS with `tls`, a context that trusts the
    server's certificate); reconnects when the server closes."""

    def __init__(self, port: int, timeout_s: float = 5.0, tls: ssl.SSLContext | None = None, host: str = "127.0.0.1"):
        self.port, self.timeout_s, self.tls, self.host = port, timeout_s, tls, host
        self.conn: http.client.HTTPConnection | None = None
        self.connections = 0  # how many were opened

    def get(self, path: str) -> Answer:
        if self.conn is None:
            if self.tls is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
            else:
                self.conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout_s, context=self.tls)
            self.connections += 1
        self.conn.request("GET", path)
        response = self.conn.getresponse()
        answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        if response.will_close:
            self.close()
        return answer

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
