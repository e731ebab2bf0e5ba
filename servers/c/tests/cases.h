/* The unit tests: each file fills its rows into one cmocka group (tests/main.c). */
#ifndef RENARD_TEST_CASES_H
#define RENARD_TEST_CASES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Append this file's tests to t from index n; return the new count. */
size_t request_tests(struct CMUnitTest *t, size_t n);
size_t seed_tests(struct CMUnitTest *t, size_t n);
size_t response_tests(struct CMUnitTest *t, size_t n);
size_t config_tests(struct CMUnitTest *t, size_t n);
size_t listener_tests(struct CMUnitTest *t, size_t n);
size_t server_tests(struct CMUnitTest *t, size_t n);

#define MAX_TESTS 1024

#endif
