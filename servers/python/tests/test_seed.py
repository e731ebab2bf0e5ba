"""SPEC §3, §3.1: every vector of spec/vectors/seeds.json, and FNV-1a-64 itself."""

import json

import pytest
from conftest import VECTORS

from renard_py.request import COMPLETE, parse
from renard_py.seed import decode_form, fnv1a64, k_for_hash, seed_hash

SEEDS = json.loads((VECTORS / "seeds.json").read_text())["vectors"]


@pytest.mark.parametrize("vector", SEEDS, ids=[v["name"] for v in SEEDS])
def test_seed_vector_gives_its_k(vector):
    query = vector["query"].encode("latin-1")
    hashed = seed_hash(query)
    if vector["seed_hex"] is None:
        assert hashed is None
    else:
        assert hashed == fnv1a64(bytes.fromhex(vector["seed_hex"]))
        assert k_for_hash(hashed, vector["n"]) == vector["k"]


@pytest.mark.parametrize("vector", SEEDS, ids=[v["name"] for v in SEEDS])
def test_seed_vector_through_the_parser(vector):
    head = b"GET /?" + vector["query"].encode("latin-1") + b" HTTP/1.1\r\nHost: a\r\n\r\n"
    outcome, request, _ = parse(head)
    assert outcome == COMPLETE
    expected = None if vector["seed_hex"] is None else fnv1a64(bytes.fromhex(vector["seed_hex"]))
    assert request[1] == expected


def test_fnv1a64_matches_published_values():
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


@pytest.mark.parametrize("encoded, decoded", [
    (b"a+b", b"a b"), (b"%41%6a", b"Aj"), (b"%zz", b"%zz"), (b"%4", b"%4"), (b"%%41", b"%A"),
    (b"%2B", b"+"), (b"", b""),
])
def test_form_decoding(encoded, decoded):
    assert decode_form(encoded) == decoded


def test_first_seed_parameter_wins_and_encoded_names_count():
    assert seed_hash(b"r=1&seed=x&seed=y") == fnv1a64(b"x")
    assert seed_hash(b"se%65d=x") == fnv1a64(b"x")
    assert seed_hash(b"seed;x=1") is None
    assert seed_hash(b"seed") == fnv1a64(b"")
