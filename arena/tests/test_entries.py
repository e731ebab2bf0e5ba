"""Manifests: strict validation (each broken manifest names its file and key), availability,
placeholder rendering, artifacts and the build-needed rule."""

import os
import textwrap
import time
from pathlib import Path

import pytest

from arena.entries.build import build, needs_build
from arena.entries.manifest import (
    ManifestError,
    artifact_bytes,
    discover,
    load_manifest,
    render_config,
    render_run,
    runtime_bytes,
    select,
)

GOOD = """
[[entry]]
name = "demo"
language = "C"
kind = "ours"
description = "a demo entry"
requires = ["sh"]
build = ["echo built > out.bin"]
run = "./out.bin --listen {listen} --count {count} --location {location} --threads {threads}"
command = "./out.bin"
artifacts = ["out.bin"]
version = "echo demo 1.0"
"""


def write(folder: Path, text: str, name: str = "entry.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def broken(tmp_path, old: str, new: str) -> ManifestError:
    path = write(tmp_path / "e", GOOD.replace(old, new))
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert str(path) in str(info.value)
    return info.value


def test_good_manifest_loads_every_key(tmp_path):
    (e,) = load_manifest(write(tmp_path / "demo", GOOD))
    assert (e.name, e.language, e.kind, e.ready, e.config) == ("demo", "C", "ours", "listening", None)
    assert e.available and e.reason is None and e.folder == tmp_path / "demo"


def test_optional_keys_default_to_nothing_and_load_when_given(tmp_path):
    (plain,) = load_manifest(write(tmp_path / "plain", GOOD))
    assert (plain.command, plain.test, plain.apt, plain.install, plain.runtime, plain.warmup_s) == (
        "./out.bin",
        [],
        [],
        [],
        [],
        0,
    )
    extra = GOOD.replace(
        'version = "echo demo 1.0"',
        'version = "v"\ntest = ["make check"]\napt = ["libfoo-dev"]\ninstall = ["npm install"]\nwarmup_s = 12',
    )
    (e,) = load_manifest(write(tmp_path / "extra", extra))
    assert (e.test, e.apt, e.install, e.warmup_s) == (["make check"], ["libfoo-dev"], ["npm install"], 12)


def test_a_peer_needs_no_command(tmp_path):
    peer = GOOD.replace('kind = "ours"', 'kind = "peer"\ntier = "infrastructure"').replace(
        'command = "./out.bin"\n', ""
    )
    (e,) = load_manifest(write(tmp_path / "p", peer))
    assert e.kind == "peer" and e.command is None


def test_two_entries_share_a_folder_and_build(tmp_path):
    second = GOOD.replace('name = "demo"', 'name = "demo-two"')
    entries = load_manifest(write(tmp_path / "demo", GOOD + second))
    assert [e.name for e in entries] == ["demo", "demo-two"]
    assert entries[0].folder == entries[1].folder and entries[0].build == entries[1].build


@pytest.mark.parametrize(
    "old,new,key",
    [
        ('version = "echo demo 1.0"', 'version = "x"\ncolour = "red"', "entry[0].colour"),  # unknown key
        ('language = "C"\n', "", "entry[0].language"),  # missing key
        ('requires = ["sh"]', 'requires = "sh"', "entry[0].requires"),  # not a list
        ('build = ["echo built > out.bin"]', "build = [1]", "entry[0].build"),  # not strings
        ('name = "demo"', 'name = "Demo_1"', "entry[0].name"),  # bad name
        ('kind = "ours"', 'kind = "mine"', "entry[0].kind"),  # bad kind
        ('command = "./out.bin"\n', "", "entry[0].command"),  # ours names its program
        ('version = "echo demo 1.0"', 'version = "x"\ntest = "make check"', "entry[0].test"),  # not a list
        ('version = "echo demo 1.0"', 'version = "x"\ninstall = "npm i"', "entry[0].install"),  # not a list
        ('version = "echo demo 1.0"', 'version = "v"\nready = "soon"', "entry[0].ready"),  # bad ready
        ("--threads {threads}", "--threads {cores}", "entry[0].run"),  # unknown placeholder
        ('description = "a demo entry"', 'description = ""', "entry[0].description"),  # empty string
        ('version = "echo demo 1.0"', 'version = "v"\nconfig = "nope.in"', "entry[0].config"),  # no such file
        ('version = "echo demo 1.0"', 'version = "v"\nwarmup_s = 2.5', "entry[0].warmup_s"),  # wrk: whole seconds
        ('version = "echo demo 1.0"', 'version = "v"\nwarmup_s = -1', "entry[0].warmup_s"),  # negative
        ('version = "echo demo 1.0"', 'version = "v"\nwarmup_s = 601', "entry[0].warmup_s"),  # beyond --warmup's bound
        ('version = "echo demo 1.0"', 'version = "v"\nwarmup_s = true', "entry[0].warmup_s"),  # a bool is no count
        ('version = "echo demo 1.0"', 'version = "v"\nwarmup_s = "10"', "entry[0].warmup_s"),  # a string
        ('version = "echo demo 1.0"', 'version = "v"\nfloor = "Floor Uring"', "entry[0].floor"),  # not a name
        ('version = "echo demo 1.0"', 'version = "v"\nfloor = 1', "entry[0].floor"),  # not a string
    ],
)
def test_broken_manifest_names_file_and_key(tmp_path, old, new, key):
    assert broken(tmp_path, old, new).key == key


V = 'version = "echo demo 1.0"'


@pytest.mark.parametrize(
    "old,new,message",
    [
        ('requires = ["sh"]', 'requires = "sh"', "requires: must be a list of strings"),
        ('name = "demo"', 'name = "Demo_1"', "name: must match [a-z0-9-]+ (got 'Demo_1')"),
        ('name = "demo"', "name = 3", "name: must be a non-empty string"),
        ('kind = "ours"', 'kind = "mine"', "kind: must be one of ours, peer, floor (got 'mine')"),
        ('command = "./out.bin"\n', "", "command: missing key (an `ours` entry names its program)"),
        (V, 'version = "v"\nready = "soon"', "ready: must be one of listening, port (got 'soon')"),
        ("--threads {threads}", "--threads {cores}", "run: unknown placeholder {cores}"),
        ('run = "', "run = \"'", "run: cannot be split into words: No closing quotation"),
        (
            V,
            'version = "v"\nwarmup_s = true',
            "warmup_s: must be a whole number of seconds from 0 to 600 (wrk takes whole seconds)",
        ),
        (V, 'version = "v"\nfloor = "A B"', "floor: must name an entry, [a-z0-9-]+ (got 'A B')"),
        (V, 'version = "v"\nnative = 1', "native: must be true or false"),
        (V, 'version = "v"\nconfig = 1', "config: must be a non-empty string"),  # an optional key's type
        ('command = "./out.bin"', 'command = ""', "command: must be a non-empty string"),
        (V, "version = 1979-05-27", "version: must be a non-empty string"),  # a TOML date is no string
        # two errors: the first in the order unknown key, type, value, run's placeholders
        (V, 'version = "v"\ncolour = 1\nwarmup_s = -1', "colour: unknown key"),
        ('language = "C"', "language = 1\nready = 'soon'", "language: must be a non-empty string"),
        (
            '--threads {threads}"',
            '--threads {cores}"\nready = "soon"',
            "ready: must be one of listening, port (got 'soon')",
        ),
    ],
)
def test_broken_manifest_says_why(tmp_path, old, new, message):
    assert str(broken(tmp_path, old, new)).endswith(f"entry.toml: entry[0].{message}")


def test_unknown_top_level_key_is_an_error(tmp_path):
    path = write(tmp_path / "e", 'title = "x"\n' + GOOD)
    with pytest.raises(ManifestError, match="title: unknown key"):
        load_manifest(path)


def test_manifest_without_entry_table_is_an_error(tmp_path):
    with pytest.raises(ManifestError, match="entry: missing key"):
        load_manifest(write(tmp_path / "e", "\n"))


def test_manifest_that_is_not_toml_is_an_error(tmp_path):
    with pytest.raises(ManifestError, match="cannot be read as TOML"):
        load_manifest(write(tmp_path / "e", "[[entry]\nname="))


def test_unknown_placeholder_in_config_template_is_an_error(tmp_path):
    write(tmp_path / "e", "listen {{port}}; workers {{cores}};", "app.conf.in")
    path = write(tmp_path / "e", GOOD.replace('version = "echo demo 1.0"', 'version = "v"\nconfig = "app.conf.in"'))
    with pytest.raises(ManifestError, match=r"entry\[0\].config: unknown placeholder \{\{cores\}\}"):
        load_manifest(path)


def test_same_name_in_two_manifests_is_an_error(tmp_path):
    write(tmp_path / "servers" / "a", GOOD)
    write(tmp_path / "peers" / "b", GOOD)
    with pytest.raises(ManifestError, match="already declared"):
        discover(tmp_path)


def test_missing_tool_makes_entry_unavailable_with_reason_not_dropped(tmp_path):
    write(tmp_path / "servers" / "a", GOOD.replace('["sh"]', '["sh", "no-such-tool-xyz"]'))
    (e,) = discover(tmp_path)
    assert not e.available and e.reason == "missing on PATH: no-such-tool-xyz"


FLOOR_URING = GOOD.replace('"demo"', '"floor-uring"').replace('"ours"', '"floor"')


def test_an_entry_names_the_floor_of_its_mechanism_and_defaults_to_the_epoll_floor(tmp_path):
    write(tmp_path / "peers" / "floor", FLOOR_URING)
    write(tmp_path / "servers" / "a", GOOD + GOOD.replace('"demo"', '"uring"') + 'floor = "floor-uring"\n')
    by_name = {e.name: e for e in discover(tmp_path)}
    assert (by_name["demo"].floor, by_name["uring"].floor) == ("floor", "floor-uring")


@pytest.mark.parametrize(
    ("named", "why"),
    [("floor-urin", "no entry of that name"), ("demo", "its kind is ours, not floor")],
)
def test_a_floor_that_is_no_floor_entry_is_an_error_naming_file_and_key(tmp_path, named, why):
    write(tmp_path / "peers" / "floor", FLOOR_URING)
    path = write(tmp_path / "servers" / "a", GOOD + GOOD.replace('"demo"', '"uring"') + f'floor = "{named}"\n')
    with pytest.raises(ManifestError, match=f"uring.floor: '{named}' is not a floor \\({why}\\)") as info:
        discover(tmp_path)
    assert info.value.path == path


PEER = GOOD.replace('"demo"', '"lib"').replace('kind = "ours"', 'kind = "peer"').replace('command = "./out.bin"\n', "")


def test_each_kind_has_its_tier_a_peer_names_its_own_and_a_production_peer_its_tuned_renard(tmp_path):
    write(tmp_path / "peers" / "floor", FLOOR_URING)
    write(tmp_path / "servers" / "a", GOOD)
    write(
        tmp_path / "peers" / "lib", PEER.replace('kind = "peer"', 'kind = "peer"\ntier = "production"\ntuned = "demo"')
    )
    write(
        tmp_path / "peers" / "web",
        PEER.replace('"lib"', '"web"').replace('kind = "peer"', 'kind = "peer"\ntier = "infrastructure"'),
    )
    by_name = {e.name: (e.tier, e.tuned) for e in discover(tmp_path)}
    assert by_name == {
        "demo": ("tuned", None),
        "floor-uring": ("floor", None),
        "lib": ("production", "demo"),
        "web": ("infrastructure", None),
    }


@pytest.mark.parametrize(
    ("table", "key", "why"),
    [
        (PEER, "tier", "missing key (a peer names its tier: production or infrastructure)"),
        (
            PEER.replace('kind = "peer"', 'kind = "peer"\ntier = "tuned"'),
            "tier",
            "must be one of production, infrastructure (got 'tuned')",
        ),
        (
            GOOD.replace('kind = "ours"', 'kind = "ours"\ntier = "production"'),
            "tier",
            "only a peer names its tier (kind ours is tuned)",
        ),
        (
            PEER.replace('kind = "peer"', 'kind = "peer"\ntier = "infrastructure"\ntuned = "demo"'),
            "tuned",
            "only a production peer names a tuned renard",
        ),
    ],
)
def test_a_tier_a_kind_cannot_have_is_an_error_naming_file_and_key(tmp_path, table, key, why):
    path = write(tmp_path / "e", table)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert (info.value.key, info.value.reason) == (f"entry[0].{key}", why)


@pytest.mark.parametrize(
    ("named", "why"), [("rust", "no entry of that name"), ("floor-uring", "its kind is floor, not ours")]
)
def test_a_tuned_renard_that_is_no_ours_entry_is_an_error_naming_file_and_key(tmp_path, named, why):
    write(tmp_path / "peers" / "floor", FLOOR_URING)
    path = write(
        tmp_path / "peers" / "lib",
        PEER.replace('kind = "peer"', f'kind = "peer"\ntier = "production"\ntuned = "{named}"'),
    )
    with pytest.raises(ManifestError, match=f"lib.tuned: '{named}' is not a tuned renard \\({why}\\)") as info:
        discover(tmp_path)
    assert info.value.path == path


def test_a_native_entry_that_only_opens_its_port_is_an_error_callgrind_needs_its_listening_line(tmp_path):
    path = write(tmp_path / "e", GOOD + 'native = true\nready = "port"\n')
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert info.value.key == "entry[0].native" and "callgrind starts it on port 0" in info.value.reason
    (ok,) = load_manifest(write(tmp_path / "f", GOOD + "native = true\n"))  # ready's default, listening
    assert ok.native


def test_discover_lists_ours_before_peers(tmp_path):
    write(
        tmp_path / "peers" / "a",
        GOOD.replace('"demo"', '"peer-a"').replace('kind = "ours"', 'kind = "peer"\ntier = "production"'),
    )
    write(tmp_path / "servers" / "z", GOOD)
    assert [e.name for e in discover(tmp_path)] == ["demo", "peer-a"]


def test_select_keeps_order_and_rejects_unknown_names(tmp_path):
    write(tmp_path / "servers" / "a", GOOD + GOOD.replace('"demo"', '"demo-b"'))
    entries = discover(tmp_path)
    assert [e.name for e in select(entries, ["demo-b", "demo"])] == ["demo-b", "demo"]
    with pytest.raises(KeyError):
        select(entries, ["nope"])


def test_run_placeholders_render_verbatim_one_word_each(tmp_path):
    (e,) = load_manifest(write(tmp_path / "demo", GOOD))
    values = {"listen": "[::1]:80", "count": "7", "location": "https://x/a b'\"{n}.png", "threads": "1"}
    assert render_run(e, values) == [
        "./out.bin",
        "--listen",
        "[::1]:80",
        "--count",
        "7",
        "--location",
        "https://x/a b'\"{n}.png",
        "--threads",
        "1",
    ]


def test_config_template_renders_doubled_placeholders_and_keeps_single_braces(tmp_path):
    write(tmp_path / "e", "events { } listen {{listen}}; n {{count}}; loc [[{{location}}]];", "app.conf.in")
    (e,) = load_manifest(
        write(tmp_path / "e", GOOD.replace('version = "echo demo 1.0"', 'version = "v"\nconfig = "app.conf.in"'))
    )
    text = render_config(e, {"listen": "127.0.0.1:9", "count": "21", "location": "https://x/{n}.png"})
    assert text == "events { } listen 127.0.0.1:9; n 21; loc [[https://x/{n}.png]];"


def test_artifact_bytes_sums_files_and_dirs_and_is_none_when_missing(tmp_path):
    (e,) = load_manifest(write(tmp_path / "demo", GOOD.replace('["out.bin"]', '["out.bin", "lib"]')))
    assert artifact_bytes(e) is None
    (tmp_path / "demo" / "out.bin").write_bytes(b"x" * 10)
    (tmp_path / "demo" / "lib").mkdir()
    (tmp_path / "demo" / "lib" / "a").write_bytes(b"y" * 5)
    assert artifact_bytes(e) == 15


def test_build_runs_commands_and_needs_build_follows_sources(tmp_path):
    (e,) = load_manifest(write(tmp_path / "demo", GOOD))
    assert needs_build(e)  # artifact missing
    result = build(e, tmp_path / "logs")
    assert result.ok and (tmp_path / "demo" / "out.bin").exists()
    assert not needs_build(e)  # artifact newer than every source
    later = time.time() + 5
    os.utime(tmp_path / "demo" / "entry.toml", (later, later))
    assert needs_build(e)  # a source changed since


def test_failing_build_reports_command_and_log_tail(tmp_path):
    (e,) = load_manifest(write(tmp_path / "demo", GOOD.replace('"echo built > out.bin"', '"echo oops-marker; exit 3"')))
    result = build(e, tmp_path / "logs")
    assert not result.ok and result.failed_command == "echo oops-marker; exit 3"
    assert "oops-marker" in result.tail() and "exit status 3" in result.tail()


def test_runtime_bytes_sum_what_the_entry_needs_beside_its_artifacts(tmp_path):
    jre = tmp_path / "jre"
    (jre / "lib").mkdir(parents=True)
    (jre / "lib" / "modules").write_bytes(b"x" * 1000)
    (jre / "java").write_bytes(b"x" * 24)
    with_runtime = GOOD.replace('version = "echo demo 1.0"', f'version = "v"\nruntime = ["{jre}"]')
    (e,) = load_manifest(write(tmp_path / "a", with_runtime))
    assert runtime_bytes(e) == 1024
    (static,) = load_manifest(write(tmp_path / "b", GOOD))
    assert runtime_bytes(static) == 0
    missing = GOOD.replace('version = "echo demo 1.0"', 'version = "v"\nruntime = ["/nonexistent/jre"]')
    (gone,) = load_manifest(write(tmp_path / "c", missing))
    assert runtime_bytes(gone) is None


@pytest.mark.parametrize(
    ("tier", "error"),
    [("production", None), ("infrastructure", "its tier (infrastructure) is measured in pipeline16, which pipelines")],
)
def test_only_a_tier_measured_in_no_pipelining_mode_may_declare_no_pipelining(tmp_path, tier, error):
    path = write(
        tmp_path / "e", PEER.replace('kind = "peer"', f'kind = "peer"\ntier = "{tier}"') + "pipelining = false\n"
    )
    if error is None:
        assert [e.pipelining for e in load_manifest(path)] == [False]
        return
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert info.value.key == "entry[0].pipelining" and info.value.reason.endswith(error)
