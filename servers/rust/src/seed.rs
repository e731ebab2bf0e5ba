//! Seeded choice (SPEC §3, §3.1): FNV-1a-64 over the decoded `seed` query value.
//!
//! Nothing here allocates: names and values are decoded octet by octet as they are
//! compared or hashed.

/// FNV-1a-64 offset basis.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a-64 prime.
pub const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a-64 of `bytes` (used by tests; the server hashes while decoding).
#[cfg(test)]
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| fnv_step(h, b))
}

#[inline]
fn fnv_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
}

/// k in 1..=n for the seed whose FNV-1a-64 is `hash`. `n` must be >= 1.
pub fn k_for_hash(hash: u64, n: u32) -> u32 {
    (hash % u64::from(n)) as u32 + 1
}

/// The FNV-1a-64 of the seed S carried by `target`, or None when it has no `seed`
/// parameter. `target` is a whole request-target (or just its path and query): the query
/// is everything after the first `?`. S is the decoded value of the first parameter whose
/// decoded name is exactly `seed` (form-urlencoded: `+` is 0x20, `%XY` is that octet, any
/// other `%` stays literal).
pub fn seed_hash(target: &[u8]) -> Option<u64> {
    let query_start = target.iter().position(|&b| b == b'?')? + 1;
    seed_in_query(&target[query_start..])
}

/// [`seed_hash`] of a query already split from its target (the octets after the `?`).
pub fn seed_in_query(query: &[u8]) -> Option<u64> {
    query.split(|&b| b == b'&').find_map(|param| {
        let (name, value) = match param.iter().position(|&b| b == b'=') {
            Some(eq) => (&param[..eq], &param[eq + 1..]),
            None => (param, &param[param.len()..]),
        };
        if decoded_equals(name, b"seed") { Some(Decoded::new(value).fold(FNV_OFFSET, fnv_step)) } else { None }
    })
}

/// Whether the form-urlencoded `encoded` decodes to exactly `expected`.
fn decoded_equals(encoded: &[u8], expected: &[u8]) -> bool {
    let mut decoded = Decoded::new(encoded);
    expected.iter().all(|&e| decoded.next() == Some(e)) && decoded.next().is_none()
}

/// Iterator over the octets of a form-urlencoded string, decoded.
struct Decoded<'a> {
    rest: &'a [u8],
}

impl<'a> Decoded<'a> {
    fn new(encoded: &'a [u8]) -> Self {
        Decoded { rest: encoded }
    }
}

impl Iterator for Decoded<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        let (&first, tail) = self.rest.split_first()?;
        let (octet, consumed) = match first {
            b'+' => (b' ', 1),
            b'%' => match (tail.first().and_then(|&b| hex(b)), tail.get(1).and_then(|&b| hex(b))) {
                (Some(hi), Some(lo)) => (hi << 4 | lo, 3),
                _ => (b'%', 1),
            },
            other => (other, 1),
        };
        self.rest = &self.rest[consumed..];
        Some(octet)
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(target: &str, n: u32) -> Option<u32> {
        seed_hash(target.as_bytes()).map(|h| k_for_hash(h, n))
    }

    fn k_of(seed: &[u8], n: u32) -> Option<u32> {
        Some(k_for_hash(fnv1a(seed), n))
    }

    #[test]
    fn fnv_of_empty_is_offset_basis() {
        assert_eq!(fnv1a(b""), 0xcbf29ce484222325)
    }
    #[test]
    fn fnv_of_a_matches_published_vector() {
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c)
    }
    #[test]
    fn fnv_of_foobar_matches_published_vector() {
        assert_eq!(fnv1a(b"foobar"), 0x85944171f73967e8)
    }
    #[test]
    fn no_query_draws_at_random() {
        assert_eq!(k("/", 21), None)
    }
    #[test]
    fn query_without_seed_draws_at_random() {
        assert_eq!(k("/?r=7", 21), None)
    }
    #[test]
    fn empty_seed_value_is_a_seed() {
        assert_eq!(k("/?seed=", 21), k_of(b"", 21))
    }
    #[test]
    fn seed_without_equals_is_empty_seed() {
        assert_eq!(k("/?seed", 21), k_of(b"", 21))
    }
    #[test]
    fn first_seed_parameter_wins() {
        assert_eq!(k("/?seed=a&seed=b", 1000), k_of(b"a", 1000))
    }
    #[test]
    fn plus_decodes_to_space() {
        assert_eq!(k("/?seed=a+b", 1000), k_of(b"a b", 1000))
    }
    #[test]
    fn percent_hex_decodes_either_case() {
        assert_eq!(k("/?seed=%2f%2F", 1000), k_of(b"//", 1000))
    }
    #[test]
    fn percent_without_two_hex_digits_stays_literal() {
        assert_eq!(k("/?seed=%zz%4", 1000), k_of(b"%zz%4", 1000))
    }
    #[test]
    fn encoded_name_matches_seed() {
        assert_eq!(k("/?s%65ed=x", 1000), k_of(b"x", 1000))
    }
    #[test]
    fn semicolon_is_not_a_separator() {
        assert_eq!(k("/?a=1;seed=x", 1000), None)
    }
    #[test]
    fn value_keeps_later_equals_signs() {
        assert_eq!(k("/?seed=a=b", 1000), k_of(b"a=b", 1000))
    }
    #[test]
    fn name_must_be_exactly_seed() {
        assert_eq!(k("/?seeds=x&Seed=y", 1000), None)
    }
    #[test]
    fn seed_after_other_parameters_is_found() {
        assert_eq!(k("/?r=1&seed=x", 1000), k_of(b"x", 1000))
    }
    #[test]
    fn non_ascii_octets_are_hashed_raw() {
        assert_eq!(k("/?seed=%C3%A9", 1000), k_of("é".as_bytes(), 1000))
    }
    /// Every case of spec/vectors/seeds.json (skipped when this crate is built outside
    /// the repository).
    #[test]
    fn shared_seed_vectors_agree() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/vectors/seeds.json");
        let Ok(text) = std::fs::read_to_string(path) else { return };
        let file: serde_json::Value = serde_json::from_str(&text).unwrap();
        let vectors = file["vectors"].as_array().unwrap();
        assert!(!vectors.is_empty());
        for v in vectors {
            let name = v["name"].as_str().unwrap();
            let target = format!("/?{}", v["query"].as_str().unwrap());
            let n = v["n"].as_u64().unwrap() as u32;
            let expected_seed = v["seed_hex"].as_str().map(|hex| {
                (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect::<Vec<u8>>()
            });
            assert_eq!(seed_hash(target.as_bytes()), expected_seed.as_deref().map(fnv1a), "{name}: seed");
            assert_eq!(k(&target, n), v["k"].as_u64().map(|k| k as u32), "{name}: k");
        }
    }
    #[test]
    fn k_is_hash_mod_n_plus_one() {
        assert_eq!(k_for_hash(0xcbf29ce484222325, 21), (0xcbf29ce484222325u64 % 21) as u32 + 1)
    }
}
