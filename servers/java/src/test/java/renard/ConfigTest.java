package renard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** SPEC §1: flags, variables, defaults, one line per error. */
class ConfigTest {
    static Config config(Map<String, String> vars, String... args) throws Config.Invalid {
        return Config.parse(args, vars::get, 2, new StringBuilder());
    }

    static Config config(String... args) throws Config.Invalid {
        return config(Map.of(), args);
    }

    static String error(Map<String, String> vars, String... args) {
        return assertThrows(Config.Invalid.class, () -> config(vars, args)).getMessage();
    }

    static String error(String... args) {
        return error(Map.of(), args);
    }

    @Test
    void defaults_apply_without_flags() throws Exception {
        Config c = config();
        assertEquals("127.0.0.1:8080", Main.format(c.listen));
        assertEquals(21, c.count);
        assertEquals(2, c.threads);
        assertEquals(10_000, c.maxConnections);
        assertEquals(10_000_000_000L, c.headerTimeoutNanos);
        assertEquals(60_000_000_000L, c.idleTimeoutNanos);
        assertEquals(1_000_000_000L, c.drainTimeoutNanos);
    }

    @Test void count_error_matches_spec_example() { assertEquals("renard: --count: must be an integer from 1 to 1000000 (got \"0\")", error("--count", "0")); }
    @Test void equals_form_is_accepted() throws Exception { assertEquals(5, config("--count=5").count); }
    @Test void flag_wins_over_variable() throws Exception { assertEquals(5, config(Map.of("RENARD_COUNT", "7"), "--count", "5").count); }
    @Test void variable_wins_over_default() throws Exception { assertEquals(7, config(Map.of("RENARD_COUNT", "7")).count); }
    @Test void empty_variable_is_unset() throws Exception { assertEquals(21, config(Map.of("RENARD_COUNT", "")).count); }
    @Test void bad_variable_is_named() { assertTrue(error(Map.of("RENARD_THREADS", "x")).startsWith("renard: RENARD_THREADS: ")); }
    @Test void ipv6_listen_is_accepted() throws Exception { assertEquals("[::1]:0", Main.format(config("--listen", "[::1]:0").listen)); }
    @Test void hostname_listen_is_refused() { assertTrue(error("--listen", "localhost:80").startsWith("renard: --listen: ")); }
    @Test void ipv4_with_leading_zero_is_refused() { assertTrue(error("--listen", "127.0.0.01:80").startsWith("renard: --listen: ")); }
    @Test void port_above_65535_is_refused() { assertTrue(error("--listen", "127.0.0.1:65536").startsWith("renard: --listen: ")); }
    @Test void count_above_million_is_refused() { assertTrue(error("--count", "1000001").startsWith("renard: --count: ")); }
    @Test void count_of_million_is_accepted() throws Exception { assertEquals(1_000_000, config("--count", "1000000").count); }
    @Test void signed_count_is_refused() { assertTrue(error("--count", "+5").startsWith("renard: --count: ")); }
    @Test void threads_above_1024_are_refused() { assertTrue(error("--threads", "1025").startsWith("renard: --threads: ")); }
    @Test void max_connections_of_zero_is_refused() { assertTrue(error("--max-connections", "0").startsWith("renard: --max-connections: ")); }
    @Test void location_without_placeholder_is_refused() { assertTrue(error("--location", "https://a/x.png").contains("must contain {n}")); }
    @Test void location_with_space_is_refused() { assertTrue(error("--location", "https://a/ {n}").startsWith("renard: --location: ")); }
    @Test void location_of_2049_octets_is_refused() { assertTrue(error("--location", "{n}" + "a".repeat(2046)).startsWith("renard: --location: ")); }
    @Test void location_of_2048_octets_is_accepted() throws Exception { assertEquals(2048, config("--location", "{n}" + "a".repeat(2045)).location.length); }
    @Test void decimal_timeout_is_accepted() throws Exception { assertEquals(250_000_000L, config("--header-timeout", "0.25").headerTimeoutNanos); }
    @Test void zero_timeout_is_refused() { assertTrue(error("--idle-timeout", "0").startsWith("renard: --idle-timeout: ")); }
    @Test void zero_drain_timeout_is_accepted() throws Exception { assertEquals(0, config("--drain-timeout", "0").drainTimeoutNanos); }
    @Test void negative_drain_timeout_is_refused() { assertTrue(error("--drain-timeout", "-1").startsWith("renard: --drain-timeout: ")); }
    @Test void timeout_above_a_day_is_refused() { assertTrue(error("--idle-timeout", "86400.5").startsWith("renard: --idle-timeout: ")); }
    @Test void timeout_of_a_day_is_accepted() throws Exception { assertEquals(86_400_000_000_000L, config("--idle-timeout", "86400").idleTimeoutNanos); }
    @Test void tiny_timeout_rounds_up_to_a_nanosecond() throws Exception { assertEquals(1, config("--header-timeout", "0.0000000001").headerTimeoutNanos); }
    @Test void exponent_timeout_is_refused() { assertTrue(error("--header-timeout", "1e3").startsWith("renard: --header-timeout: ")); }
    @Test void unknown_flag_is_named() { assertTrue(error("--bogus").startsWith("renard: --bogus: unknown flag")); }
    @Test void missing_value_is_named() { assertEquals("renard: --count: missing value", error("--count")); }
    @Test void positional_argument_is_refused() { assertTrue(error("serve").startsWith("renard: \"serve\": unexpected argument")); }
    @Test void errors_are_one_line() { assertFalse(error("--location", "a\nb").contains("\n")); }

    @Test
    void help_and_version_print_and_return_null() throws Exception {
        StringBuilder out = new StringBuilder();
        assertNull(Config.parse(new String[] {"--help"}, k -> null, 2, out));
        assertTrue(out.toString().startsWith("usage: renard"));
        out.setLength(0);
        assertNull(Config.parse(new String[] {"--version"}, k -> null, 2, out));
        assertEquals("renard " + Main.VERSION + "\n", out.toString());
    }

    @Test
    void ipv6_is_printed_in_rfc5952_form() {
        assertEquals("[2001:db8::1:0:0:1]:80", Main.format(new InetSocketAddress(Config.parseListen("[2001:db8:0:0:1:0:0:1]:80").getAddress(), 80)));
        assertEquals("[::]:8080", Main.format(Config.parseListen("[::]:8080")));
    }
}
