"""SPEC §1: flags, variables, defaults; a bad command line is one stderr line, exit 2."""

import os
import subprocess

import pytest
from conftest import ENTRY

from renard_py import config
from renard_py.config import ConfigError


def parse(*args, **env):
    return config.parse(list(args), env, cpus=2)


def error(*args, **env) -> str:
    with pytest.raises(ConfigError) as raised:
        parse(*args, **env)
    return str(raised.value)


def test_defaults_apply_without_flags():
    c = parse()
    assert (c.listen, c.count, c.threads, c.max_connections) == ("127.0.0.1:8080", 21, 2, 10_000)
    assert (c.header_timeout, c.idle_timeout, c.drain_timeout) == (10.0, 60.0, 1.0)


def test_count_error_matches_spec_example():
    expected = 'renard: --count: must be an integer from 1 to 1000000 (got "0")'
    assert error("--count", "0") == expected


def test_flag_wins_over_variable_which_wins_over_default():
    assert parse("--count=5", RENARD_COUNT="7").count == 5
    assert parse(RENARD_COUNT="7").count == 7
    assert parse(RENARD_COUNT="").count == 21


def test_bad_variable_is_named():
    assert error(RENARD_THREADS="x").startswith("renard: RENARD_THREADS: ")


@pytest.mark.parametrize("args, prefix", [
    (["--listen", "localhost:80"], "renard: --listen: "),
    (["--listen", "127.0.0.1:65536"], "renard: --listen: "),
    (["--listen", "[::1]"], "renard: --listen: "),
    (["--count", "1000001"], "renard: --count: "),
    (["--count", "+5"], "renard: --count: "),
    (["--threads", "1025"], "renard: --threads: "),
    (["--max-connections", "0"], "renard: --max-connections: "),
    (["--location", "https://a/x.png"], "renard: --location: must contain {n}"),
    (["--location", "https://a/ {n}"], "renard: --location: "),
    (["--location", "{n}" + "a" * 2046], "renard: --location: "),
    (["--idle-timeout", "0"], "renard: --idle-timeout: "),
    (["--idle-timeout", "86400.5"], "renard: --idle-timeout: "),
    (["--header-timeout", "1e3"], "renard: --header-timeout: "),
    (["--drain-timeout", "-1"], "renard: --drain-timeout: "),
    (["--bogus"], "renard: --bogus: unknown flag"),
    (["--count"], "renard: --count: missing value"),
    (["serve"], 'renard: "serve": unexpected argument'),
])
def test_bad_input_is_named(args, prefix):
    assert error(*args).startswith(prefix)


def test_values_in_range_are_accepted():
    c = parse("--listen", "[::1]:0", "--location", "{n}" + "a" * 2045, "--header-timeout",
              "0.25", "--idle-timeout", "86400", "--drain-timeout", "0", "--count", "1000000")
    assert (c.listen, len(c.location), c.header_timeout, c.idle_timeout, c.drain_timeout,
            c.count) == ("[::1]:0", 2048, 0.25, 86400.0, 0.0, 1_000_000)


def test_errors_are_one_line():
    assert "\n" not in error("--location", "a\nb")


def run(*args, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RENARD_")}
    environment.update(env)
    return subprocess.run([str(ENTRY / "renard"), *args], capture_output=True, text=True,
                          env=environment, timeout=20)


@pytest.mark.skipif(not (ENTRY.parents[1] / ".venv/bin/python").exists(), reason="no .venv")
def test_program_exits_2_with_one_line():
    result = run("--count", "0")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        'renard: --count: must be an integer from 1 to 1000000 (got "0")']
    assert run(RENARD_IDLE_TIMEOUT="x").stderr.startswith("renard: RENARD_IDLE_TIMEOUT: ")


@pytest.mark.skipif(not (ENTRY.parents[1] / ".venv/bin/python").exists(), reason="no .venv")
def test_program_help_and_version_exit_0():
    assert run("--help").stdout.startswith("usage: renard")
    assert run("--version").stdout == "renard 0.1.0\n"
