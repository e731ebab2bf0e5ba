"""Write every case of spec/vectors/seeds.json as C rows (a build step of the unit tests)."""
import json
import sys


def c_string(s: bytes) -> str:
    return '"' + "".join(chr(b) if 0x20 <= b < 0x7F and chr(b) not in '"\\?' else f"\\{b:03o}" for b in s) + '"'


vectors = json.load(open(sys.argv[1]))["vectors"]
for v in vectors:
    seed = "NULL" if v["seed_hex"] is None else c_string(bytes.fromhex(v["seed_hex"]))
    seed_len = 0 if v["seed_hex"] is None else len(v["seed_hex"]) // 2
    print(f'{{{c_string(v["name"].encode())}, {c_string(v["query"].encode())}, {seed}, {seed_len}, '
          f'{v["n"]}, {v["k"] or 0}}},')
