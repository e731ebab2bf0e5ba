/* Seeded choice (SPEC §3, §3.1): FNV-1a-64 over the decoded `seed` query value. */
#ifndef RENARD_SEED_H
#define RENARD_SEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* FNV-1a-64 of b[0..n). */
uint64_t fnv1a(const uint8_t *b, size_t n);

/* True, and *hash = FNV-1a-64 of the seed S, when the request-target t[0..n) (or its path
 * and query) has a query with a `seed` parameter: S is the form-urlencoded-decoded value
 * of the first parameter whose decoded name is exactly `seed`. Never allocates. */
bool seed_hash(const uint8_t *t, size_t n, uint64_t *hash);

/* k in 1..count for the seed whose FNV-1a-64 is hash (count >= 1). */
static inline uint32_t k_for_hash(uint64_t hash, uint32_t count)
{
    return (uint32_t)(hash % count) + 1;
}

#endif
