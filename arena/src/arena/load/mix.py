"""Request mixes: which request-targets the load generators send (`arena bench --mix`,
`arena stack --mix`).

`default` is what the bench always sent: the URL's own path on every request (`GET /` for an
entry), so figures stay comparable with every earlier run. `seeded` is the traffic a public
avatar service sees: most requests draw at random, some carry `?seed=NAME` (a name from a
fixed list, the same image each time: what a proxy or a browser may cache), a few a
cache-buster `?cb=N` (N counts 1, 2, 3 … in the order sent: a URL not seen before, which
defeats a cache; SPEC §3.1: any parameter but `seed` draws at random).

One sequence, made here: `kinds()` lays out PERIOD requests, each block of 1000 holding
exactly the mix's per mille of each kind in an order shuffled by random.Random(random_seed),
so every run, and every tool, gets the same sequence; after PERIOD requests it starts over
(the cache-busters' N go on counting). Two tools send it:
- wrk: `lua()` puts the sequence in wrk's Lua `request()`, one call a request, in the order
  called (with one connection, the order on the wire; with more, wrk's connections take them
  as they become writable). wrk calls `request()` once before it connects, to count the
  requests of a pipelined write (script_verify_request), so the wire starts at the second.
- h2load: `write_uris()` writes the first PERIOD request-targets as full URLs, one a line,
  for its `-i FILE`; h2load walks the file in order for each client (connection) on its own,
  starting over at its end, so with several connections each sends the sequence from its
  start: the same shares, but a cache-buster's N is sent once per connection, not once.
Warm-up and measured runs are separate processes: each starts the sequence from its beginning.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

# The seeds of the seeded mix: fixed, so that two runs request the same seeds.
SEED_NAMES = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
    "ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert", "sybil",
)  # fmt: skip

BLOCK = 1000  # requests in which each kind has exactly its per mille
PERIOD = 20 * BLOCK  # requests before the sequence starts over
# One character a request in kinds(): the URL's path alone, a cache-buster, or a seed
# (SEED_CHARS[i] for SEED_NAMES[i]).
PLAIN, BUSTED = "/", "+"
SEED_CHARS = "abcdefghijklmnop"

OPTION_HELP = "The requests sent: default, every one GET /; seeded, 80% GET /, 15% /?seed=NAME, 5% /?cb=N."


@dataclass(frozen=True)
class Mix:
    """Shares of the three kinds of request, in per mille of requests (they sum to 1000)."""

    name: str
    words: str  # what the report says was sent
    seeded_per_mille: int = 0  # `?seed=NAME`, NAME drawn uniformly from SEED_NAMES
    busted_per_mille: int = 0  # `?cb=N`, N = 1, 2, 3 … in the order sent
    random_seed: int = 20261125  # of the random.Random that lays the sequence out

    @property
    def plain_per_mille(self) -> int:
        return 1000 - self.seeded_per_mille - self.busted_per_mille

    @property
    def is_default(self) -> bool:
        return self.seeded_per_mille == 0 and self.busted_per_mille == 0


MIXES: dict[str, Mix] = {
    m.name: m
    for m in (
        Mix("default", "every request `GET /` (the URL's own path)"),
        Mix(
            "seeded",
            "80% `GET /`, 15% `/?seed=NAME` (16 fixed names), 5% `/?cb=N` (N counting up), exactly so in "
            "every 1000 requests; the same sequence in every run and from every load generator",
            seeded_per_mille=150,
            busted_per_mille=50,
        ),
    )
}
DEFAULT_MIX = "default"


def mix(name: str) -> Mix:
    """The registered mix; raises KeyError naming the known ones."""
    try:
        return MIXES[name]
    except KeyError:
        raise KeyError(f"unknown mix {name!r} (mixes: {', '.join(MIXES)})") from None


def words(name: str) -> str:
    """What the report says of a run's mix (an unknown name, from a later arena: the name)."""
    return MIXES[name].words if name in MIXES else f"mix {name!r}"


@cache
def kinds(m: Mix) -> str:
    """The sequence's PERIOD requests, one character each (PLAIN, BUSTED or a SEED_CHARS)."""
    draw = random.Random(m.random_seed)
    out = []
    for _ in range(PERIOD // BLOCK):
        block = [PLAIN] * m.plain_per_mille + [BUSTED] * m.busted_per_mille
        block += [draw.choice(SEED_CHARS) for _ in range(m.seeded_per_mille)]
        draw.shuffle(block)
        out += block
    return "".join(out)


def targets(m: Mix, base: str, count: int) -> list[str]:
    """The first `count` request-targets of the sequence: base (the URL's path and query)
    alone, or with `seed=NAME` or `cb=N` appended after `?` (`&` when base has a query)."""
    layout = kinds(m)
    join = "&" if "?" in base else "?"
    out, busted = [], 0
    for i in range(count):
        kind = layout[i % PERIOD]
        if kind == PLAIN:
            out.append(base)
        elif kind == BUSTED:
            busted += 1
            out.append(f"{base}{join}cb={busted}")
        else:
            out.append(f"{base}{join}seed={SEED_NAMES[SEED_CHARS.index(kind)]}")
    return out


def write_uris(m: Mix, url: str, path: Path) -> Path:
    """h2load's `-i` file: the sequence's first PERIOD requests as full URLs (url's scheme,
    host and port; its path and query as the base), one a line; returns path."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    base = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    path.write_text("".join(f"{origin}{t}\n" for t in targets(m, base, PERIOD)))
    return path


def lua(m: Mix) -> str:
    """Lua for wrk defining arena_next_path() (the sequence's next request-target, as targets())
    and a request() that sends it; a mode's own script (pipeline.lua), appended after, calls
    arena_next_path() per pipelined request. Empty for the default mix: wrk then sends its
    static request, as before."""
    if m.is_default:
        return ""
    names = ", ".join(f'"{n}"' for n in SEED_NAMES)
    return f"""-- request mix `{m.name}` (arena/load/mix.py): one character a request, "{PLAIN}" the path alone,
-- "{BUSTED}" a cache-buster, "{SEED_CHARS[0]}".."{SEED_CHARS[-1]}" the seed SEED_NAMES[1..16]
local KINDS = "{kinds(m)}"
local SEED_NAMES = {{ {names} }}
local PLAIN, BUSTED, FIRST_SEED = string.byte("{PLAIN}"), string.byte("{BUSTED}"), string.byte("{SEED_CHARS[0]}")
local position, cache_buster = 0, 0

-- The next request-target: the URL's path, with ?seed=NAME or ?cb=N appended (& when it has a query).
function arena_next_path()
   local base = wrk.path
   local join = base:find("?", 1, true) and "&" or "?"
   position = position % #KINDS + 1
   local kind = KINDS:byte(position)
   if kind == PLAIN then
      return base
   elseif kind == BUSTED then
      cache_buster = cache_buster + 1
      return base .. join .. "cb=" .. cache_buster
   end
   return base .. join .. "seed=" .. SEED_NAMES[kind - FIRST_SEED + 1]
end

request = function()
   return wrk.format(nil, arena_next_path())
end
"""
