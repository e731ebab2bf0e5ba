package renard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** SPEC §3, §3.1: FNV-1a-64 and the seed in the query. */
class SeedTest {
    /** k for the query {@code query}, or null when it draws at random. */
    static Integer k(String query, int n) {
        byte[] q = query.getBytes(StandardCharsets.ISO_8859_1);
        Request r = new Request();
        Seed.find(q, 0, q.length, r);
        return r.seeded ? Seed.k(r.seedHash, n) : null;
    }

    static Integer kOf(String seed, int n) {
        return Seed.k(Seed.fnv1a(seed.getBytes(StandardCharsets.UTF_8)), n);
    }

    @Test void fnv_of_empty_is_offset_basis() { assertEquals(0xcbf29ce484222325L, Seed.fnv1a(new byte[0])); }
    @Test void fnv_of_a_matches_published_vector() { assertEquals(0xaf63dc4c8601ec8cL, Seed.fnv1a("a".getBytes())); }
    @Test void fnv_of_foobar_matches_published_vector() { assertEquals(0x85944171f73967e8L, Seed.fnv1a("foobar".getBytes())); }
    @Test void query_without_seed_draws_at_random() { assertEquals(null, k("r=7", 21)); }
    @Test void empty_query_draws_at_random() { assertEquals(null, k("", 21)); }
    @Test void empty_seed_value_is_a_seed() { assertEquals(kOf("", 21), k("seed=", 21)); }
    @Test void seed_without_equals_is_empty_seed() { assertEquals(kOf("", 21), k("seed", 21)); }
    @Test void first_seed_parameter_wins() { assertEquals(kOf("a", 1000), k("seed=a&seed=b", 1000)); }
    @Test void plus_decodes_to_space() { assertEquals(kOf("a b", 1000), k("seed=a+b", 1000)); }
    @Test void percent_hex_decodes_either_case() { assertEquals(kOf("//", 1000), k("seed=%2f%2F", 1000)); }
    @Test void percent_without_two_hex_digits_stays_literal() { assertEquals(kOf("%zz%4", 1000), k("seed=%zz%4", 1000)); }
    @Test void encoded_name_matches_seed() { assertEquals(kOf("x", 1000), k("s%65ed=x", 1000)); }
    @Test void semicolon_is_not_a_separator() { assertEquals(null, k("a=1;seed=x", 1000)); }
    @Test void value_keeps_later_equals_signs() { assertEquals(kOf("a=b", 1000), k("seed=a=b", 1000)); }
    @Test void name_must_be_exactly_seed() { assertEquals(null, k("seeds=x&Seed=y&see=z", 1000)); }
    @Test void seed_after_other_parameters_is_found() { assertEquals(kOf("x", 1000), k("r=1&seed=x", 1000)); }
    @Test void non_ascii_octets_are_hashed_raw() { assertEquals(kOf("\u00e9", 1000), k("seed=%C3%A9", 1000)); }
    @Test void k_is_unsigned_hash_mod_n_plus_one() { assertEquals(Long.remainderUnsigned(0xcbf29ce484222325L, 21) + 1, Seed.k(0xcbf29ce484222325L, 21)); }

    /** Every vector of spec/vectors/seeds.json: the decoded seed (by its hash) and k. */
    @Test
    void shared_seed_vectors_agree() throws IOException {
        Path file = Path.of(System.getProperty("renard.spec", "../../spec"), "vectors", "seeds.json");
        String text = Files.readString(file);
        List<String> objects = new ArrayList<>();
        Matcher object = Pattern.compile("\\{[^{}]*\"query\"[^{}]*\\}").matcher(text);
        while (object.find()) objects.add(object.group());
        assertEquals(count(text, "\"query\""), objects.size(), "every vector read");
        assertTrue(objects.size() >= 10, "seeds.json holds the vectors");
        for (String v : objects) {
            String name = field(v, "name"), query = field(v, "query"), seedHex = field(v, "seed_hex"), k = field(v, "k");
            int n = Integer.parseInt(field(v, "n"));
            byte[] q = query.getBytes(StandardCharsets.ISO_8859_1);
            Request r = new Request();
            Seed.find(q, 0, q.length, r);
            if (seedHex == null) {
                assertFalse(r.seeded, name + ": no seed");
                assertEquals(null, k, name);
            } else {
                assertTrue(r.seeded, name + ": seed found");
                assertEquals(Seed.fnv1a(hex(seedHex)), r.seedHash, name + ": seed");
                assertEquals(Integer.parseInt(k), Seed.k(r.seedHash, n), name + ": k");
            }
            // And through the whole request, as the server sees it.
            byte[] head = ("GET /?" + query + " HTTP/1.1\r\nHost: a\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
            Request whole = new Request();
            assertEquals(Parser.COMPLETE, new Parser().parse(head, 0, head.length, whole), name);
            assertEquals(r.seeded, whole.seeded, name);
        }
    }

    /** The value of {@code key} in a flat JSON object: a string's text, a number, or null. */
    private static String field(String object, String key) {
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*(\"([^\"\\\\]*)\"|null|(\\d+))").matcher(object);
        if (!m.find()) throw new AssertionError("no " + key + " in " + object);
        return m.group(2) != null ? m.group(2) : m.group(3);
    }

    private static int count(String text, String needle) {
        int n = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) n++;
        return n;
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }
}
