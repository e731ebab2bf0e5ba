"""A keep-alive HTTP/1.1 client over http.client, for tests that count every request."""

import http.client
from dataclasses import dataclass


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


class Client:
    """One keep-alive connection to 127.0.0.1:port; reconnects when the server closes."""

    def __init__(self, port: int, timeout_s: float = 5.0):
        self.port, self.timeout_s = port, timeout_s
        self.conn: http.client.HTTPConnection | None = None

    def get(self, path: str) -> Answer:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout_s)
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
