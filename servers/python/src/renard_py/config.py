"""Configuration (SPEC §1): flags, `RENARD_*` variables, defaults. A flag wins over its
variable, a variable over the default; an empty variable is unset. Every error is one line
naming the flag (or variable) and the reason: `ConfigError`, which main prints, exit 2."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Iterable, Mapping

VERSION = "0.1.0"

USAGE = """\
usage: renard [--flag VALUE | --flag=VALUE]...

Answers GET / with a 302 redirect to TEMPLATE with {n} replaced by k in 1..N
(uniform, or FNV-1a-64 of ?seed=S mod N + 1).

  --listen HOST:PORT       RENARD_LISTEN           default 127.0.0.1:8080 (IPv6: [ADDR]:PORT)
  --count N                RENARD_COUNT            default 21 (1 to 1000000)
  --location TEMPLATE      RENARD_LOCATION         default https://avatar.example.org/Renard-{n}.png
  --threads N              RENARD_THREADS          default: CPUs available (1 to 1024 processes)
  --header-timeout S       RENARD_HEADER_TIMEOUT   default 10 (seconds, > 0, <= 86400)
  --idle-timeout S         RENARD_IDLE_TIMEOUT     default 60 (seconds, > 0, <= 86400)
  --max-connections N      RENARD_MAX_CONNECTIONS  default 10000 (1 to 1000000)
  --drain-timeout S        RENARD_DRAIN_TIMEOUT    default 1 (seconds, >= 0, <= 86400)
  --help                   print this text
  --version                print the version
"""


class ConfigError(Exception):
    """The whole stderr line for a bad command line."""


class Config:
    """A validated configuration (a plain class: dataclasses cost start-up time)."""

    __slots__ = ("count", "drain_timeout", "header_timeout", "host", "idle_timeout",
                 "location", "max_connections", "port", "threads")

    def __init__(self, host: str, port: int, count: int, location: bytes, threads: int,
                 header_timeout: float, idle_timeout: float, max_connections: int,
                 drain_timeout: float):
        self.host = host                        # numeric IPv4 or IPv6, without brackets
        self.port = port                        # 0 picks a free port
        self.count = count                      # N: k is drawn from 1..N
        self.location = location                # template: visible ASCII, holds {n}
        self.threads = threads                  # worker processes
        self.header_timeout = header_timeout    # seconds: absolute deadline for a head
        self.idle_timeout = idle_timeout        # seconds: silence, or a stalled response
        self.max_connections = max_connections  # open connections across all workers
        self.drain_timeout = drain_timeout      # seconds of serving after SIGTERM (§7.6)

    @property
    def listen(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def _quoted(raw: str) -> str:
    """`raw` in double quotes, anything unprintable escaped (one line, always)."""
    octets = os.fsencode(raw)
    escaped = "".join(chr(b) if 0x20 <= b < 0x7F and b not in b'"\\' else f"\\x{b:02x}"
                      for b in octets)
    return f'"{escaped}"'


def parse_listen(value: str) -> tuple[str, int]:
    match = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:([0-9]{1,5})|([0-9.]+):([0-9]{1,5})", value)
    try:
        if match is None:
            raise ValueError
        if match.group(1) is not None:
            host, port = str(ipaddress.IPv6Address(match.group(1))), int(match.group(2))
        else:
            host, port = str(ipaddress.IPv4Address(match.group(3))), int(match.group(4))
        if port > 65535:
            raise ValueError
    except ValueError:
        raise ValueError("must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535") \
            from None
    return host, port


def _integer(maximum: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        if re.fullmatch(r"[0-9]{1,9}", value) and 1 <= int(value) <= maximum:
            return int(value)
        raise ValueError(f"must be an integer from 1 to {maximum}")
    return parse


def _seconds(zero_allowed: bool) -> Callable[[str], float]:
    reason = ("must be a decimal number of seconds from 0 to 86400" if zero_allowed else
              "must be a decimal number of seconds greater than 0 and at most 86400")

    def parse(value: str) -> float:
        if not re.fullmatch(r"[0-9]{1,5}(\.[0-9]+)?", value) or float(value) > 86400:
            raise ValueError(reason)
        if value.strip("0.") == "":  # zero, however written
            if not zero_allowed:
                raise ValueError(reason)
            return 0.0
        return max(float(value), 1e-9)
    return parse


def parse_location(value: str) -> bytes:
    octets = os.fsencode(value)
    if not 1 <= len(octets) <= 2048:
        raise ValueError("must be 1 to 2048 octets long")
    if not all(0x21 <= b <= 0x7E for b in octets):
        raise ValueError("must be visible ASCII only (0x21-0x7E: no space, no control octets)")
    if b"{n}" not in octets:
        raise ValueError("must contain {n}")
    return octets


# Flag, variable, parser, default; in Config order (host and port come from --listen).
_FLAGS = (
    ("--listen", "RENARD_LISTEN", parse_listen, ("127.0.0.1", 8080)),
    ("--count", "RENARD_COUNT", _integer(1_000_000), 21),
    ("--location", "RENARD_LOCATION", parse_location,
     b"https://avatar.example.org/Renard-{n}.png"),
    ("--threads", "RENARD_THREADS", _integer(1024), None),
    ("--header-timeout", "RENARD_HEADER_TIMEOUT", _seconds(False), 10.0),
    ("--idle-timeout", "RENARD_IDLE_TIMEOUT", _seconds(False), 60.0),
    ("--max-connections", "RENARD_MAX_CONNECTIONS", _integer(1_000_000), 10_000),
    ("--drain-timeout", "RENARD_DRAIN_TIMEOUT", _seconds(True), 1.0),
)


def parse(args: Iterable[str], env: Mapping[str, str], cpus: int) -> Config | str:
    """The configuration, or "help" / "version"; raises ConfigError with the stderr line."""
    given: dict[str, str] = {}
    names = {flag for flag, *_ in _FLAGS}
    args = iter(args)
    for arg in args:
        if arg in ("--help", "--version"):
            return arg[2:]
        if not arg.startswith("--"):
            raise ConfigError(f"renard: {_quoted(arg)}: unexpected argument "
                              "(renard takes only flags; see --help)")
        name, eq, inline = arg.partition("=")
        if name not in names:
            raise ConfigError(f"renard: {_quoted(name)[1:-1]}: unknown flag (see --help)")
        if eq:
            given[name] = inline
        else:
            value = next(args, None)
            if value is None:
                raise ConfigError(f"renard: {name}: missing value")
            given[name] = value
    values = []
    for flag, variable, parse_value, default in _FLAGS:
        if flag in given:
            source, raw = flag, given[flag]
        elif env.get(variable):
            source, raw = variable, env[variable]
        else:
            values.append(max(1, min(cpus, 1024)) if default is None else default)
            continue
        try:
            values.append(parse_value(raw))
        except ValueError as error:
            raise ConfigError(f"renard: {source}: {error} (got {_quoted(raw)})") from None
    (host, port), *rest = values
    return Config(host, port, *rest)
