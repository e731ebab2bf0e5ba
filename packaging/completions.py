"""Writes renard's bash, zsh and fish completions from its --help, so that they name the
flags the binary has, no more, no fewer (packaging/tests/test_docs.py checks all three).

Usage: python3 packaging/completions.py RENARD_BINARY OUT_DIR
  writes OUT_DIR/renard.bash, OUT_DIR/_renard (zsh) and OUT_DIR/renard.fish

An option line of --help is GNU's shape: two or more spaces, an optional `-x, `, `--name`, an
optional VALUE word, two or more spaces, the description. A VALUE of FILE completes file names,
DIR directories, USER[:GROUP] user names; any other value is typed by hand.
"""

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

OPTION_LINE = re.compile(r"^ {2,}(?:(-[A-Za-z]), )?\s*(--[a-z][a-z-]*)(?:[ =](\S+))?(?: {2,}(.*))?$")


@dataclass(frozen=True)
class Option:
    short: str | None  # "-h", or None
    long: str  # "--listen"
    value: str | None  # the VALUE word of --help ("FILE", "N"), None for a switch
    summary: str  # the description's first clause, for zsh and fish


def options_of(help_text: str) -> list[Option]:
    """The options --help lists, in its order, each with its description's first clause."""
    parsed: list[tuple[str | None, str, str | None, list[str]]] = []
    for line in help_text.splitlines():
        match = OPTION_LINE.match(line)
        if match:
            short, long, value, description = match.groups()
            parsed.append((short, long, value, [description] if description else []))
        elif parsed and line.startswith(" " * 8) and line.strip():
            parsed[-1][3].append(line.strip())  # a description's next line
        elif parsed and parsed[-1][3]:
            parsed.append((None, "", None, []))  # the option list ended: stop continuing
    found = []
    for short, long, value, lines in parsed:
        if long:
            found.append(Option(short, long, value, summary_of(" ".join(lines))))
    if not found:
        raise SystemExit("completions: --help lists no option in the shape '  --name VALUE  text'")
    return found


def summary_of(description: str, width: int = 60) -> str:
    """The description up to its first '; ', ': ' or ' (', cut at a ', ' to fit width."""
    clause = re.split(r";\s|:\s|\s\(", description, maxsplit=1)[0].strip()
    while len(clause) > width and ", " in clause:
        clause = clause.rsplit(", ", 1)[0]
    return clause


def value_kind(value: str | None) -> str:
    """How a shell completes the value: 'file', 'dir', 'user', 'text' (typed), or 'none'."""
    if value is None:
        return "none"
    if value == "FILE":
        return "file"
    if value == "DIR":
        return "dir"
    if value.startswith("USER"):
        return "user"
    return "text"


def bash(options: list[Option]) -> str:
    words = " ".join(name for o in options for name in (o.short, o.long) if name)
    cases = {"file": "compgen -f", "dir": "compgen -d", "user": "compgen -u", "text": None}
    branches = []
    for kind, command in cases.items():
        names = "|".join(o.long for o in options if value_kind(o.value) == kind)
        if not names:
            continue
        action = f'mapfile -t COMPREPLY < <({command} -- "$cur")' if command else "COMPREPLY=()"
        branches.append(f"        {names})\n            {action}\n            return ;;")
    return f"""# bash completion for renard (generated from renard --help by packaging/completions.py)
_renard() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
    case $prev in
{chr(10).join(branches)}
    esac
    case $cur in
        --*=*) COMPREPLY=() ;;
        *) mapfile -t COMPREPLY < <(compgen -W "{words}" -- "$cur") ;;
    esac
}}
complete -F _renard renard
"""


def zsh_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh(options: list[Option]) -> str:
    actions = {"file": "_files", "dir": "_files -/", "user": "_users", "text": " "}
    specs = []
    for o in options:
        # --name= takes the value after '=' or as the next word; a switch takes none.
        equals = "" if o.value is None else "="
        tail = f"[{zsh_quote(o.summary)}]"
        if o.value is not None:
            tail += f":{zsh_quote(o.value.lower())}:{actions[value_kind(o.value)]}"
        if o.short:  # zsh's brace expansion makes two specs that exclude each other
            specs.append(f"    '({o.short} {o.long})'{{{o.short},{o.long}{equals}}}'{tail}'")
        else:
            specs.append(f"    '{o.long}{equals}{tail}'")
    body = " \\\n".join(specs)
    return f"""#compdef renard
# zsh completion for renard (generated from renard --help by packaging/completions.py)
_arguments -s \\
{body}
"""


def fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(options: list[Option]) -> str:
    arguments = {
        "file": "-r -F",
        "dir": "-x -a '(__fish_complete_directories)'",
        "user": "-x -a '(__fish_complete_users)'",
    }
    lines = ["# fish completion for renard (generated from renard --help by packaging/completions.py)"]
    for o in options:
        parts = ["complete -c renard"]
        if o.short:
            parts.append(f"-s {o.short[1:]}")
        parts.append(f"-l {o.long[2:]}")
        if o.value is not None:
            parts.append(arguments.get(value_kind(o.value), "-x"))
        parts.append(f"-d {fish_quote(o.summary)}")
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    binary, out = sys.argv[1], Path(sys.argv[2])
    help_text = subprocess.run([binary, "--help"], check=True, capture_output=True, text=True).stdout
    options = options_of(help_text)
    out.mkdir(parents=True, exist_ok=True)
    (out / "renard.bash").write_text(bash(options))
    (out / "_renard").write_text(zsh(options))
    (out / "renard.fish").write_text(fish(options))


if __name__ == "__main__":
    main()
