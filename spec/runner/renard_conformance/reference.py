"""Reference implementation of SPEC.md §3: finding the seed in a query and picking k.

Stdlib only. The runner uses it to compute the expected Location of a seeded request;
spec/vectors/seeds.json is generated from it and checked against it.
"""

FNV_OFFSET_BASIS = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK_64 = (1 << 64) - 1
HEX_DIGITS = b"0123456789abcdefABCDEF"


def decode_form_component(text: bytes) -> bytes:
    """Decodes one name or value as application/x-www-form-urlencoded (SPEC §3.1).

    `+` is 0x20; `%` and two hex digits (either case) is that octet; any other `%` stays
    a literal `%`. No character-set decoding: octets in, octets out.
    """
    out = bytearray()
    i = 0
    while i < len(text):
        octet = text[i]
        if octet == 0x2B:  # '+'
            out.append(0x20)
            i += 1
        elif octet == 0x25 and i + 2 < len(text) and text[i + 1] in HEX_DIGITS and text[i + 2] in HEX_DIGITS:
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(octet)
            i += 1
    return bytes(out)


def find_seed(query: bytes | str | None) -> bytes | None:
    """Returns S, the decoded value of the first parameter named `seed`, or None.

    `query` is the part of the request-target after the first `?` (None: no `?`).
    Parameters are split on `&` only; a parameter without `=` has an empty value.
    """
    if query is None:
        return None
    if isinstance(query, str):
        query = query.encode("latin-1")
    for parameter in query.split(b"&"):
        name, _, value = parameter.partition(b"=")
        if decode_form_component(name) == b"seed":
            return decode_form_component(value)
    return None


def query_of(target: bytes | str) -> bytes | None:
    """The query of an origin-form or absolute-form target: after the first `?`, or None."""
    if isinstance(target, str):
        target = target.encode("latin-1")
    if b"?" not in target:
        return None
    return target.split(b"?", 1)[1]


def fnv1a64(data: bytes) -> int:
    """FNV-1a, 64 bits: h = (h XOR b) * prime mod 2^64 for each octet, from the offset basis."""
    h = FNV_OFFSET_BASIS
    for octet in data:
        h = ((h ^ octet) * FNV_PRIME) & MASK_64
    return h


def pick(seed: bytes, n: int) -> int:
    """k for a seeded request with N = n: (FNV-1a-64(seed) mod n) + 1, in 1..n."""
    if not 1 <= n:
        raise ValueError(f"n must be >= 1 (got {n})")
    return fnv1a64(seed) % n + 1


def render_location(template: str, k: int) -> str:
    """The Location value: every `{n}` of the template replaced by the decimal k."""
    return template.replace("{n}", str(k))
