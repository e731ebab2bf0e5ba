"""A server outside the repository, by command (`arena bench --cmd`): an ad-hoc entry.

Any HTTP/1.1 server a command line starts is measured like an entry (pinned, capped,
interleaved with the floor and nginx, the same statistics and report); its verification is
reduced to one check, "GET PATH answers EXPECT", made before each sample and each timed
start. The command is split into words like an entry's `run` and takes the same
placeholders ({listen} {host} {port} {threads} ...); the arena waits for the port.
"""

from __future__ import annotations

import http.client
import shlex
from pathlib import Path

from .manifest import PLACEHOLDERS, RUN_PLACEHOLDER_RE, Entry

NAME = "cmd"  # the entry's name in the run and the report
CHECK_TIMEOUT_S = 5.0


class OutsideError(ValueError):
    """A command line that cannot be an entry: str() names the problem."""


class Outside(Entry):
    """An Entry started from a command line; `path` and `expect` are what it must answer."""

    path: str = "/"
    expect: int = 302

    def answer_problem(self, host: str, port: int) -> str:
        """ "" when GET path answers expect, else what came back. Raises OSError when it cannot connect."""
        connection = http.client.HTTPConnection(host, port, timeout=CHECK_TIMEOUT_S)
        return get_problem(connection, self.path, self.expect)


def get_problem(connection: http.client.HTTPConnection, target: str, expect: int, shown: str = "") -> str:
    """The one check of a server the arena does not know (--cmd here, --url in remote.py):
    "" when `GET target` (Connection: close) on connection, HTTP or HTTPS, answers `expect`,
    else what came back, saying `GET shown` (default: target). Closes the connection. Raises
    OSError when it cannot connect or the answer does not come within the connection's timeout."""
    shown = shown or target
    try:
        connection.request("GET", target, headers={"Connection": "close"})
        response = connection.getresponse()
        response.read()
    except http.client.HTTPException as err:
        return f"GET {shown}: not an HTTP/1.1 answer ({type(err).__name__}: {err})"
    finally:
        connection.close()
    if response.status != expect:
        return f"GET {shown}: expected {expect}, got {response.status} {response.reason}"
    return ""


def outside_entry(command: str, path: str = "/", expect: int = 302, cwd: Path | None = None) -> Outside:
    """The ad-hoc entry for `command` (run in cwd, default the working directory); raises OutsideError."""
    try:
        words = shlex.split(command)
    except ValueError as err:
        raise OutsideError(f"cannot be split into words: {err}") from None
    if not words:
        raise OutsideError("is empty")
    names = RUN_PLACEHOLDER_RE.findall(command)
    unknown = [n for n in names if n not in PLACEHOLDERS or n in ("config", "count", "location")]
    if unknown:
        raise OutsideError(f"unknown placeholder {{{unknown[0]}}} (use {{listen}}, {{host}}, {{port}}, {{threads}})")
    if not {"listen", "port"} & set(names):
        raise OutsideError("must contain {listen} or {port}: the arena chooses the port")
    if not path.startswith("/"):
        raise OutsideError(f"--path must start with / (got {path!r})")
    description = f"{command} (checked: GET {path} answers {expect})"
    entry = ad_hoc(Outside, NAME, "outside", description, command, (cwd or Path.cwd()).resolve(), "--cmd")
    entry.path, entry.expect = path, expect
    return entry


def ad_hoc(kind: type[Entry], name: str, language: str, description: str, run: str, folder: Path, flag: str):
    """An entry made from a command-line flag (--cmd, --url) rather than an entry.toml: a peer
    with nothing to build or require, its version `true`, ready when its port accepts."""
    entry = kind(
        name=name,
        language=language,
        kind="peer",
        description=description,
        requires=[],
        build=[],
        run=run,
        artifacts=[],
        version="true",
        ready="port",
    )
    entry.folder, entry.manifest = folder, Path(flag)
    return entry
