/* SPEC §3, §3.1: FNV-1a-64 and the seed's decoding, including every case of
 * spec/vectors/seeds.json (generated into build/seeds.inc by the Makefile). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "seed.h"

struct vector {
    const char *name, *query;
    const char *seed; /* decoded S; NULL: no seed, random draw */
    size_t seed_len;
    uint32_t n, k;    /* k = 0: random */
};

static const struct vector VECTORS[] = {
#include "seeds.inc"
};

/* The vector's query behind "/?", through seed_hash: the expected S, hash and k. */
static void run_vector(void **state)
{
    const struct vector *v = *state;
    size_t len = strlen(v->query) + 2;
    char *target = malloc(len + 1); /* exactly sized: ASan catches a read past the end */
    snprintf(target, len + 1, "/?%s", v->query);
    uint64_t hash;
    bool seeded = seed_hash((const uint8_t *)target, len, &hash);
    free(target);
    assert_int_equal(seeded, v->seed != NULL);
    if (!seeded) return;
    assert_int_equal(hash, fnv1a((const uint8_t *)v->seed, v->seed_len));
    assert_int_equal(k_for_hash(hash, v->n), v->k);
}

static void fnv_of_empty_is_offset_basis(void **s) { assert_int_equal(fnv1a(NULL, 0), 0xcbf29ce484222325ULL); }
static void fnv_of_a_matches_published_vector(void **s)
{
    assert_int_equal(fnv1a((const uint8_t *)"a", 1), 0xaf63dc4c8601ec8cULL);
}
static void fnv_of_foobar_matches_published_vector(void **s)
{
    assert_int_equal(fnv1a((const uint8_t *)"foobar", 6), 0x85944171f73967e8ULL);
}
static void no_query_draws_at_random(void **s)
{
    uint64_t h;
    assert_false(seed_hash((const uint8_t *)"/", 1, &h));
}
static void only_the_first_question_mark_starts_the_query(void **s)
{
    uint64_t h;
    assert_true(seed_hash((const uint8_t *)"/?x=?&seed=b?", 13, &h));
    assert_int_equal(h, fnv1a((const uint8_t *)"b?", 2));
}

size_t seed_tests(struct CMUnitTest *t, size_t n)
{
    for (size_t i = 0; i < sizeof VECTORS / sizeof VECTORS[0]; i++)
        t[n++] = (struct CMUnitTest){.name = VECTORS[i].name, .test_func = run_vector, .initial_state = (void *)&VECTORS[i]};
    const struct CMUnitTest more[] = {
        cmocka_unit_test(fnv_of_empty_is_offset_basis),
        cmocka_unit_test(fnv_of_a_matches_published_vector),
        cmocka_unit_test(fnv_of_foobar_matches_published_vector),
        cmocka_unit_test(no_query_draws_at_random),
        cmocka_unit_test(only_the_first_question_mark_starts_the_query),
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) t[n++] = more[i];
    return n;
}
