"""spec/vectors/seeds.json as C++ rows for tests/seed_test.cpp:
{"name", "query", "seed_hex" (or nullptr: no seed), n, k (0: random)},"""
import json
import sys

def cxx(s):
    out = ""
    for b in s.encode("utf-8"):
        c = chr(b)
        out += c if (c.isascii() and c.isalnum()) or c in "-_=&%+;./ " else '\\x%02x""' % b
    return '"' + out + '"'

doc = json.load(open(sys.argv[1], encoding="utf-8"))
for v in doc["vectors"]:
    hexs = "nullptr" if v["seed_hex"] is None else cxx(v["seed_hex"])
    print("{%s, %s, %s, %d, %d}," % (cxx(v["name"]), cxx(v["query"]), hexs, v["n"], v["k"] or 0))
