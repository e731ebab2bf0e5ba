"""Request mixes: which request-targets wrk sends (`arena bench --mix`).

`default` is what the bench always sent: the URL's own path on every request (`GET /` for an
entry), so figures stay comparable with every earlier run. `seeded` is the traffic a public
avatar service sees: most requests draw at random, some carry `?seed=NAME` (a name from a
fixed list, the same image each time: what a proxy or a browser may cache), a few a
cache-buster `?cb=N` (N counts 1, 2, 3 … per wrk run: never the same URL twice, which
defeats a cache; SPEC §3.1: any parameter but `seed` draws at random).

The choice is made in wrk's Lua `request()` from LuaJIT's math.random seeded with a fixed
number, so every wrk run sends the same sequence of request-targets (with one connection,
in the same order on the wire; with more, wrk's connections take them in the order they
become writable). Warm-up and measured runs are separate wrk processes: each starts the
sequence from its beginning.
"""

from __future__ import annotations

from dataclasses import dataclass

# The seeds of the seeded mix: fixed, so that two runs request the same seeds.
SEED_NAMES = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
    "ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert", "sybil",
)  # fmt: skip


@dataclass(frozen=True)
class Mix:
    """Shares of the three kinds of request, in per mille of requests (they sum to 1000)."""

    name: str
    words: str  # what the report says was sent
    seeded_per_mille: int = 0  # `?seed=NAME`, NAME drawn uniformly from SEED_NAMES
    busted_per_mille: int = 0  # `?cb=N`, N = 1, 2, 3 … in the order sent
    random_seed: int = 20261125  # math.randomseed of each wrk run

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
            "80% `GET /`, 15% `/?seed=NAME` (16 fixed names), 5% `/?cb=N` (a new N each time); "
            "the same sequence in every run (fixed random seed)",
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


def lua(m: Mix) -> str:
    """Lua for wrk defining arena_next_path() (the next request-target) and a request() that
    sends it; a mode's own script (pipeline.lua), appended after, calls arena_next_path() per
    pipelined request. Empty for the default mix: wrk then sends its static request, as before."""
    if m.is_default:
        return ""
    names = ", ".join(f'"{n}"' for n in SEED_NAMES)
    return f"""-- request mix `{m.name}` (arena/mix.py), shares in per mille
local SEEDED_PER_MILLE, BUSTED_PER_MILLE = {m.seeded_per_mille}, {m.busted_per_mille}
local SEED_NAMES = {{ {names} }}
math.randomseed({m.random_seed})
local cache_buster = 0

-- The next request-target: the URL's path, with ?seed=NAME or ?cb=N appended (& when it has a query).
function arena_next_path()
   local base = wrk.path
   local join = base:find("?", 1, true) and "&" or "?"
   local draw = math.random(1000)
   if draw <= SEEDED_PER_MILLE then
      return base .. join .. "seed=" .. SEED_NAMES[math.random(#SEED_NAMES)]
   elseif draw <= SEEDED_PER_MILLE + BUSTED_PER_MILLE then
      cache_buster = cache_buster + 1
      return base .. join .. "cb=" .. cache_buster
   end
   return base
end

request = function()
   return wrk.format(nil, arena_next_path())
end
"""
