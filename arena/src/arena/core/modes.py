"""The modes a server is loaded in and the kinds of entry: declared once, read by every wing.

A mode names what wrk is told (MODES), whether the server's CPU is capped in it, and how the
report words it; the thresholds below judge a sample taken in one.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("ours", "peer", "floor")  # floor: the design's physical limit, not a conforming server
# The tiers the ranking shows, in its order: our hand-tuned renards (kind ours), the servers a
# language's users write with its usual library (peers), the servers an operator runs as they
# come, configured (nginx, HAProxy, Varnish, php-fpm: peers), the floors (kind floor).
TIERS = ("tuned", "production", "infrastructure", "floor")
PEER_TIERS = ("production", "infrastructure")  # a peer names its own (entry.toml `tier`)
KIND_TIERS = {"ours": "tuned", "floor": "floor"}  # the other kinds' tier, implied


# The modes a tier is measured in, where not every mode (docs/arena/method.md, "Which modes
# each tier runs"): a production entry in keep-alive capped, the README's ranking and the price
# of the idiom's mode, and on a whole core, whose figure tells whether the cap distorts it.
TIER_MODES = {"production": ("keepalive", "keepalive-capped")}


def runs_in(tier: str | None, mode_name: str) -> bool:
    """Whether an entry of this tier is measured in this mode (a tier TIER_MODES does not name: every mode)."""
    return mode_name in TIER_MODES.get(tier, (mode_name,))


def tier_of(kind: str, tier: str | None) -> str:
    """The tier of an entry of this kind: the one it names, else its kind's (a peer of a run
    recorded before tiers: "peer")."""
    return tier or KIND_TIERS.get(kind, kind)


@dataclass(frozen=True)
class Mode:
    """One way of loading a server: what wrk is told, and what the report says about it."""

    name: str
    words: str  # what the report's heading says the mode is
    wrk_args: tuple[str, ...] = ()  # added to wrk's command line
    script: str | None = None  # a Lua file of arena/wrk whose request() the mode uses
    # wrk does not time requests sent through a pipelining request(): its percentiles read 0
    # (github.com/wg/wrk/issues/236). Such a mode's latencies are recorded as null.
    timed: bool = True
    # A capped mode runs the server under a CPU quota (config.cpu_quota of one core), so that
    # the load generator has more CPU than the server; `dedicated` names the same load on
    # a dedicated core, whose CPU cost per request the capped one is compared with.
    dedicated: str | None = None

    @property
    def capped(self) -> bool:
        return self.dedicated is not None

    @property
    def pipelines(self) -> bool:
        """wrk sends several requests in one write (a pipelining request() script)."""
        return self.script == "pipeline.lua"

    @property
    def connects_per_request(self) -> bool:
        """wrk opens a new connection for each request (the close modes)."""
        return "Connection: close" in self.wrk_args

    @property
    def latency_note(self) -> str | None:
        return None if self.timed else "wrk does not time pipelined requests (wg/wrk#236): latency not measured"


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("keepalive", "keep-alive connections"),
        Mode("pipeline16", "16 requests pipelined per write", script="pipeline.lua", timed=False),
        Mode("close", "a new connection per request", wrk_args=("-H", "Connection: close")),
        Mode("keepalive-capped", "keep-alive connections, server CPU capped", dedicated="keepalive"),
        Mode(
            "close-capped",
            "a new connection per request, server CPU capped",
            wrk_args=("-H", "Connection: close"),
            dedicated="close",
        ),
    )
}
DEFAULT_MODES = tuple(MODES)
CLIENT_BOUND_SHARE = 0.90  # the load generator's core this busy while the server's is not
CAP_DISTORTION = 1.15  # capped CPU per request above this times the dedicated-core figure: distorted
# A sample whose CPUs were stolen from (a VM's steal time) for more than this share of their
# time is repeated once, and kept flagged if stolen again (bench.py, hostload.py).
STEAL_LIMIT = 0.02


def mode(name: str) -> Mode:
    """The registered mode, or a bare one for a name this version does not know (an old run)."""
    return MODES.get(name) or Mode(name, "custom mode")
