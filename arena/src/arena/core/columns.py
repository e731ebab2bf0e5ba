"""The columns of the results tables: the full one (docs/results.md, and every entry skeleton's
README, entries/scaffold.py, so the two cannot differ) and the README's compact one, a screen
wide; report/readme.py writes the rows of both."""

COLUMNS = (
    "entry",
    "tier",
    "keep-alive, capped: CPU µs/req",
    "req/s",
    "× nginx",
    "of floor",
    "syscalls/req (keep-alive · 16 pipelined)",
    "instr./req (keep-alive · 16 pipelined)",
    "16 pipelined: CPU µs/req · req/s",
    "new connection, capped: CPU µs/req · req/s",
    "peak RSS",
    "artifact + runtime",
    "start-up",
    "spec cases",
)
HEADER = "| " + " | ".join(COLUMNS) + " |\n|---|---|" + "---:|" * (len(COLUMNS) - 2)

# The README's first screen: a few of the full table's cells (report/readme.py). No latency: the
# bench's capped p99 is the cgroup's throttling (40-60 ms for nearly every entry), and a p99 at a
# fixed rate is `arena latency`'s, which a bench does not run.
COMPACT_COLUMNS = (
    "entry",
    "tier",
    "keep-alive, capped: CPU µs/req",
    "of floor",
    "peak RSS",
    "artifact + runtime",
)
COMPACT_HEADER = "| " + " | ".join(COMPACT_COLUMNS) + " |\n|---|---|" + "---:|" * (len(COMPACT_COLUMNS) - 2)
