"""The man page and the completions say what --help says: the same options, no more, no fewer
(help2man and packaging/completions.py make them from --help at every release; these tests
read the results as a user's man and shells do)."""

import os
import re

import pytest

from conftest import HOST, run

FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*[a-z]|-[A-Za-z])(?![\w-])")
OPTION_LINE = re.compile(r"^ {2,}(?:(-[A-Za-z]), )?(--[a-z][a-z-]*[a-z])")


def options_in_help(help_text: str) -> set[str]:
    """The options --help lists, each on a line of its own (short and long names)."""
    found = set()
    for line in help_text.splitlines():
        if match := OPTION_LINE.match(line):
            found |= {name for name in match.groups() if name}
    return found


@pytest.fixture(scope="module")
def man_text(unpacked) -> str:
    """The release's man page as man shows it, 80 columns, no hyphenation at line ends."""
    page = unpacked(HOST) / "renard.8"
    env = {**os.environ, "MANWIDTH": "200", "MAN_KEEP_FORMATTING": "", "LC_ALL": "C.UTF-8"}
    shown = run("man", "--no-hyphenation", "--no-justification", "-E", "UTF-8", "-l", page, env=env).stdout
    return re.sub(r".\x08", "", shown)  # overstrike bold/underline, if any


def test_help_lists_its_options(help_text):
    options = options_in_help(help_text)
    assert {"-h", "--help", "-V", "--version", "--listen", "--config", "--count-from"} <= options


def test_man_page_renders_without_warnings(unpacked):
    page = unpacked(HOST) / "renard.8"
    shown = run("man", "--warnings", "-E", "UTF-8", "-l", page, env={**os.environ, "MANWIDTH": "80"})
    assert shown.stderr == ""
    assert run("lexgrog", page).stdout.strip().endswith(': "renard - redirect GET / to a random avatar image"')


def test_man_page_options_are_the_options_of_help(man_text, help_text):
    section = man_text.split("\nOPTIONS\n", 1)[1]
    section = re.split(r"\n[A-Z][A-Z ]+\n", section, maxsplit=1)[0]
    # Each option's entry starts at the section's indentation (7 columns), its text deeper.
    entries = [line.strip() for line in section.splitlines() if re.match(r"^ {7}-", line)]
    in_man = {name for entry in entries for name in FLAG.findall(entry.split("  ")[0])}
    assert in_man == options_in_help(help_text)


def test_man_page_names_no_flag_that_help_does_not(man_text, help_text):
    assert set(FLAG.findall(man_text)) - {"-"} <= set(FLAG.findall(help_text))


def bash_complete(script, *words: str, cwd=None) -> list[str]:
    """What bash's completion function offers for the words typed, the last one being completed."""
    typed = " ".join(f"'{w}'" for w in words)
    command = f'source "{script}"; COMP_WORDS=({typed}); COMP_CWORD={len(words) - 1}; _renard'
    return run(
        "bash", "--norc", "--noprofile", "-c", command + '; printf "%s\\n" "${COMPREPLY[@]}"', cwd=cwd
    ).stdout.split()


def test_bash_completion_offers_the_options_of_help(unpacked, help_text):
    offered = bash_complete(unpacked(HOST) / "completions" / "renard.bash", "renard", "-")
    assert sorted(offered) == sorted(options_in_help(help_text))


def test_bash_completion_completes_files_after_config_and_folders_after_count_from(unpacked, tmp_path):
    script = unpacked(HOST) / "completions" / "renard.bash"
    (tmp_path / "site.conf").write_text("")
    (tmp_path / "images").mkdir()
    assert bash_complete(script, "renard", "--config", "si", cwd=tmp_path) == ["site.conf"]
    assert bash_complete(script, "renard", "--count-from", "", cwd=tmp_path) == ["images"]


def test_zsh_completion_declares_the_options_of_help(unpacked, help_text):
    folder = unpacked(HOST) / "completions"
    # _arguments replaced by a function that prints its specs, one a line.
    specs = run(
        "zsh",
        "-f",
        "-c",
        f'fpath=("{folder}" $fpath); autoload -Uz _renard; _arguments() {{ print -rl -- "$@" }}; _renard',
    ).stdout.splitlines()
    declared = {re.match(r"^(?:\([^)]*\))?(-[^=\[]+)", spec).group(1) for spec in specs if spec != "-s"}
    assert declared == options_in_help(help_text)


def test_fish_completion_offers_the_options_of_help(unpacked, help_text):
    script = unpacked(HOST) / "completions" / "renard.fish"
    offered = run("fish", "--no-config", "-c", f"source '{script}'; complete -C'renard -'").stdout.splitlines()
    assert {line.split("\t")[0] for line in offered} == options_in_help(help_text)
