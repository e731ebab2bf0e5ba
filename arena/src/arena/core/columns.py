"""The columns of the README's results table: one header for the top README (report/readme.py
writes the rows) and every entry skeleton's README (entries/scaffold.py), so the two cannot differ."""

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
