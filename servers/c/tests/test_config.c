/* SPEC §1: flags, variables, defaults, and one line per error. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>

#include "cases.h"
#include "config.h"

static const char *const *vars; /* NAME, VALUE pairs, NULL-terminated */

static const char *getvar(const char *name)
{
    for (size_t i = 0; vars && vars[i]; i += 2)
        if (strcmp(vars[i], name) == 0) return vars[i + 1];
    return NULL;
}

static char error[512];
static struct config c;

/* Parse args (NULL-terminated) with the variables env. */
static enum command run(const char *const *args, const char *const *env)
{
    int argc = 0;
    while (args[argc]) argc++;
    vars = env;
    return config_parse(argc, (char *const *)args, getvar, 2, &c, error, sizeof error);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NO_ARGS ((const char *const[]){NULL})
#define NO_VARS NULL

/* Refused with a line starting with `start`. */
static void refused(const char *const *args, const char *const *env, const char *start)
{
    assert_int_equal(run(args, env), COMMAND_ERROR);
    assert_memory_equal(error, start, strlen(start));
    assert_null(strchr(error, '\n'));
}

static void defaults_apply_without_flags(void **s)
{
    assert_int_equal(run(NO_ARGS, NO_VARS), COMMAND_SERVE);
    char address[80];
    format_address((struct sockaddr *)&c.listen, address, sizeof address);
    assert_string_equal(address, "127.0.0.1:8080");
    assert_int_equal(c.count, 21);
    assert_int_equal(c.threads, 2);
    assert_int_equal(c.max_connections, 10000);
    assert_int_equal(c.header_timeout_ns, 10000000000LL);
    assert_int_equal(c.idle_timeout_ns, 60000000000LL);
    assert_int_equal(c.drain_timeout_ns, 1000000000LL);
    assert_string_equal(c.location, "https://avatar.example.org/Renard-{n}.png");
}
static void count_error_matches_spec_example(void **s)
{
    assert_int_equal(run(ARGS("--count", "0"), NO_VARS), COMMAND_ERROR);
    assert_string_equal(error, "renard: --count: must be an integer from 1 to 1000000 (got \"0\")");
}
static void equals_form_is_accepted(void **s)
{
    assert_int_equal(run(ARGS("--count=5"), NO_VARS), COMMAND_SERVE);
    assert_int_equal(c.count, 5);
}
static void flag_wins_over_variable(void **s)
{
    assert_int_equal(run(ARGS("--count", "5"), ARGS("RENARD_COUNT", "7")), COMMAND_SERVE);
    assert_int_equal(c.count, 5);
}
static void variable_wins_over_default(void **s)
{
    assert_int_equal(run(NO_ARGS, ARGS("RENARD_COUNT", "7")), COMMAND_SERVE);
    assert_int_equal(c.count, 7);
}
static void empty_variable_is_unset(void **s)
{
    assert_int_equal(run(NO_ARGS, ARGS("RENARD_COUNT", "")), COMMAND_SERVE);
    assert_int_equal(c.count, 21);
}
static void bad_variable_is_named(void **s) { refused(NO_ARGS, ARGS("RENARD_THREADS", "x"), "renard: RENARD_THREADS: "); }
static void ipv6_listen_is_accepted(void **s)
{
    assert_int_equal(run(ARGS("--listen", "[::1]:0"), NO_VARS), COMMAND_SERVE);
    char address[80];
    format_address((struct sockaddr *)&c.listen, address, sizeof address);
    assert_string_equal(address, "[::1]:0");
}
static void hostname_listen_is_refused(void **s) { refused(ARGS("--listen", "localhost:80"), NO_VARS, "renard: --listen: "); }
static void port_above_65535_is_refused(void **s) { refused(ARGS("--listen", "127.0.0.1:65536"), NO_VARS, "renard: --listen: "); }
static void listen_without_port_is_refused(void **s) { refused(ARGS("--listen", "127.0.0.1"), NO_VARS, "renard: --listen: "); }
static void count_above_million_is_refused(void **s) { refused(ARGS("--count", "1000001"), NO_VARS, "renard: --count: "); }
static void count_of_million_is_accepted(void **s)
{
    assert_int_equal(run(ARGS("--count", "1000000"), NO_VARS), COMMAND_SERVE);
    assert_int_equal(c.count, 1000000);
}
static void signed_count_is_refused(void **s) { refused(ARGS("--count", "+5"), NO_VARS, "renard: --count: "); }
static void threads_above_1024_are_refused(void **s) { refused(ARGS("--threads", "1025"), NO_VARS, "renard: --threads: "); }
static void max_connections_of_zero_is_refused(void **s)
{
    refused(ARGS("--max-connections", "0"), NO_VARS, "renard: --max-connections: ");
}
static void location_without_placeholder_is_refused(void **s)
{
    refused(ARGS("--location", "https://a/x.png"), NO_VARS, "renard: --location: must contain {n}");
}
static void location_with_space_is_refused(void **s) { refused(ARGS("--location", "https://a/ {n}"), NO_VARS, "renard: --location: "); }
static void location_of_2049_octets_is_refused(void **s)
{
    static char v[2050];
    memset(v, 'a', 2049);
    memcpy(v, "{n}", 3);
    refused(ARGS("--location", v), NO_VARS, "renard: --location: ");
}
static void location_of_2048_octets_is_accepted(void **s)
{
    static char v[2049];
    memset(v, 'a', 2048);
    memcpy(v, "{n}", 3);
    assert_int_equal(run(ARGS("--location", v), NO_VARS), COMMAND_SERVE);
    assert_int_equal(strlen(c.location), 2048);
}
static void decimal_timeout_is_accepted(void **s)
{
    assert_int_equal(run(ARGS("--header-timeout", "0.25"), NO_VARS), COMMAND_SERVE);
    assert_int_equal(c.header_timeout_ns, 250000000);
}
static void tiny_timeout_is_one_nanosecond(void **s)
{
    assert_int_equal(run(ARGS("--idle-timeout", "0.0000000001"), NO_VARS), COMMAND_SERVE);
    assert_int_equal(c.idle_timeout_ns, 1);
}
static void zero_timeout_is_refused(void **s) { refused(ARGS("--idle-timeout", "0"), NO_VARS, "renard: --idle-timeout: "); }
static void negative_timeout_is_refused(void **s) { refused(ARGS("--idle-timeout", "-1"), NO_VARS, "renard: --idle-timeout: "); }
static void timeout_above_a_day_is_refused(void **s) { refused(ARGS("--idle-timeout", "86400.5"), NO_VARS, "renard: --idle-timeout: "); }
static void timeout_of_a_day_is_accepted(void **s)
{
    assert_int_equal(run(ARGS("--idle-timeout", "86400"), NO_VARS), COMMAND_SERVE);
    assert_int_equal(c.idle_timeout_ns, 86400000000000LL);
}
static void exponent_timeout_is_refused(void **s) { refused(ARGS("--header-timeout", "1e3"), NO_VARS, "renard: --header-timeout: "); }
static void trailing_dot_timeout_is_refused(void **s) { refused(ARGS("--header-timeout", "1."), NO_VARS, "renard: --header-timeout: "); }
static void zero_drain_timeout_is_accepted(void **s)
{
    assert_int_equal(run(ARGS("--drain-timeout", "0"), NO_VARS), COMMAND_SERVE);
    assert_int_equal(c.drain_timeout_ns, 0);
}
static void drain_timeout_variable_is_read(void **s)
{
    assert_int_equal(run(NO_ARGS, ARGS("RENARD_DRAIN_TIMEOUT", "0.5")), COMMAND_SERVE);
    assert_int_equal(c.drain_timeout_ns, 500000000);
}
static void negative_drain_timeout_is_refused(void **s)
{
    assert_int_equal(run(ARGS("--drain-timeout", "-1"), NO_VARS), COMMAND_ERROR);
    assert_string_equal(error, "renard: --drain-timeout: must be a decimal number of seconds from 0 to 86400 (got \"-1\")");
}
static void unknown_flag_is_named(void **s) { refused(ARGS("--bogus"), NO_VARS, "renard: --bogus: unknown flag"); }
static void missing_value_is_named(void **s)
{
    assert_int_equal(run(ARGS("--count"), NO_VARS), COMMAND_ERROR);
    assert_string_equal(error, "renard: --count: missing value");
}
static void positional_argument_is_refused(void **s) { refused(ARGS("serve"), NO_VARS, "renard: \"serve\": unexpected argument"); }
static void help_is_recognised(void **s) { assert_int_equal(run(ARGS("--help"), NO_VARS), COMMAND_HELP); }
static void version_is_recognised(void **s) { assert_int_equal(run(ARGS("--version"), NO_VARS), COMMAND_VERSION); }
static void errors_are_one_line(void **s) { refused(ARGS("--location", "a\nb"), NO_VARS, "renard: --location: "); }

size_t config_tests(struct CMUnitTest *t, size_t n)
{
    const struct CMUnitTest more[] = {
        cmocka_unit_test(defaults_apply_without_flags),
        cmocka_unit_test(count_error_matches_spec_example),
        cmocka_unit_test(equals_form_is_accepted),
        cmocka_unit_test(flag_wins_over_variable),
        cmocka_unit_test(variable_wins_over_default),
        cmocka_unit_test(empty_variable_is_unset),
        cmocka_unit_test(bad_variable_is_named),
        cmocka_unit_test(ipv6_listen_is_accepted),
        cmocka_unit_test(hostname_listen_is_refused),
        cmocka_unit_test(port_above_65535_is_refused),
        cmocka_unit_test(listen_without_port_is_refused),
        cmocka_unit_test(count_above_million_is_refused),
        cmocka_unit_test(count_of_million_is_accepted),
        cmocka_unit_test(signed_count_is_refused),
        cmocka_unit_test(threads_above_1024_are_refused),
        cmocka_unit_test(max_connections_of_zero_is_refused),
        cmocka_unit_test(location_without_placeholder_is_refused),
        cmocka_unit_test(location_with_space_is_refused),
        cmocka_unit_test(location_of_2049_octets_is_refused),
        cmocka_unit_test(location_of_2048_octets_is_accepted),
        cmocka_unit_test(decimal_timeout_is_accepted),
        cmocka_unit_test(tiny_timeout_is_one_nanosecond),
        cmocka_unit_test(zero_timeout_is_refused),
        cmocka_unit_test(negative_timeout_is_refused),
        cmocka_unit_test(timeout_above_a_day_is_refused),
        cmocka_unit_test(timeout_of_a_day_is_accepted),
        cmocka_unit_test(exponent_timeout_is_refused),
        cmocka_unit_test(trailing_dot_timeout_is_refused),
        cmocka_unit_test(zero_drain_timeout_is_accepted),
        cmocka_unit_test(drain_timeout_variable_is_read),
        cmocka_unit_test(negative_drain_timeout_is_refused),
        cmocka_unit_test(unknown_flag_is_named),
        cmocka_unit_test(missing_value_is_named),
        cmocka_unit_test(positional_argument_is_refused),
        cmocka_unit_test(help_is_recognised),
        cmocka_unit_test(version_is_recognised),
        cmocka_unit_test(errors_are_one_line),
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) t[n++] = more[i];
    return n;
}
