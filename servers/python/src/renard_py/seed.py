"""Seeded choice (SPEC §3, §3.1): FNV-1a-64 over the decoded value of the first `seed`
parameter of the query."""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


def fnv1a64(data: bytes) -> int:
    """FNV-1a-64 of `data`."""
    h = FNV_OFFSET
    for octet in data:
        h = ((h ^ octet) * FNV_PRIME) & _MASK
    return h


def decode_form(encoded: bytes) -> bytes:
    """application/x-www-form-urlencoded: `+` is 0x20, `%XY` (either case) that octet, any
    other `%` stays literal; no character-set decoding."""
    if b"+" in encoded:
        encoded = encoded.replace(b"+", b" ")
    # unquote_to_bytes keeps a `%` that two hex digits do not follow.
    return unquote_to_bytes(encoded) if b"%" in encoded else encoded


def seed_hash(query: bytes) -> int | None:
    """FNV-1a-64 of the seed S in `query` (what follows the first `?`), or None when no
    parameter's decoded name is exactly `seed` (a random draw)."""
    for parameter in query.split(b"&"):
        name, _, value = parameter.partition(b"=")
        if name == b"seed" or (name != b"" and decode_form(name) == b"seed"):
            return fnv1a64(decode_form(value))
    return None


def k_for_hash(hash_value: int, count: int) -> int:
    """k in 1..count for a seed whose FNV-1a-64 is `hash_value`."""
    return hash_value % count + 1
