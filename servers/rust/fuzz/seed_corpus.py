"""Seed the fuzz corpora from spec/vectors/http: one file per case and target.

parse_request: a split octet (the middle), then the case's octets.
connection: the target's operations (fuzz_targets/connection.rs): each run of data as
pieces of at most 255 octets (op 0, length, octets), write room after each run (op 3,
255 -> 16 KiB), a pause as time passing (op 6, 0.02 s units), then the client's FIN
(op 5). Usage: python3 seed_corpus.py VECTORS_DIR CORPUS_DIR
"""

import json
import pathlib
import sys

TIMEOUTS_S = {"header-timeout": 2.0, "idle-timeout": 3.0}  # the target's configuration


def segments(case):
    """(data, pause in seconds) pairs of the case's send list."""
    for segment in case["send"]:
        if isinstance(segment, str):
            yield segment.encode("latin-1"), 0.0
        elif "hex" in segment:
            yield bytes.fromhex(segment["hex"]), 0.0
        elif "repeat" in segment:
            yield segment["repeat"].encode("latin-1") * segment["times"], 0.0
        elif "pause_ms" in segment:
            yield b"", segment["pause_ms"] / 1000
        else:
            yield (
                b"",
                TIMEOUTS_S[segment["pause"]] * segment.get("fraction", 1.0)
                + (0.5 if "fraction" not in segment else 0),
            )


def connection_ops(case):
    ops = bytearray()
    for data, pause in segments(case):
        for at in range(0, len(data), 255):
            piece = data[at : at + 255]
            ops += bytes([0, len(piece)]) + piece
        if data:
            ops += bytes([3, 255])
        if pause:
            ops += bytes([6, min(255, round(pause / 0.02))])
    return bytes(ops + bytes([3, 255, 5]))


def main(vectors, corpus):
    parse_dir = pathlib.Path(corpus, "parse_request")
    conn_dir = pathlib.Path(corpus, "connection")
    parse_dir.mkdir(parents=True, exist_ok=True)
    conn_dir.mkdir(parents=True, exist_ok=True)
    count = 0
    for path in sorted(pathlib.Path(vectors, "http").glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            octets = b"".join(data for data, _ in segments(case))
            (parse_dir / f"vector-{case['name']}").write_bytes(bytes([128]) + octets)
            (conn_dir / f"vector-{case['name']}").write_bytes(connection_ops(case))
            count += 1
    print(f"seed_corpus: {count} cases from {vectors} into {corpus}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
