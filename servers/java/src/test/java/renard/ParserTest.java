package renard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import java.util.stream.Stream;

/** One line per rule of SPEC §5–§7.1, each named after what it proves. */
class ParserTest {
    private static final String H = " HTTP/1.1\r\nHost: a\r\n\r\n";

    /** 302/200/404/405 for a route, the refusal's status, or 0 for "need more input". */
    static int status(byte[] input) {
        Request r = new Request();
        switch (new Parser().parse(input, 0, input.length, r)) {
            case Parser.COMPLETE:
                return new int[] {0, 302, 200, 404, 405}[r.route];
            case Parser.PARTIAL:
                return 0;
            default:
                return r.reject;
        }
    }

    static Request complete(String input) {
        byte[] bytes = latin1(input);
        Request r = new Request();
        assertEquals(Parser.COMPLETE, new Parser().parse(bytes, 0, bytes.length, r), input);
        return r;
    }

    static byte[] latin1(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    static String big(String prefix, int fill, String suffix) {
        return prefix + "a".repeat(fill) + suffix;
    }

    static String manyFields(int count) {
        StringBuilder s = new StringBuilder("GET / HTTP/1.1\r\nHost: a\r\n");
        for (int i = 1; i < count; i++) s.append("X-").append(i).append(": v\r\n");
        return s.append("\r\n").toString();
    }

    static Stream<Arguments> cases() {
        return Stream.of(
            // §2 routing
            c("get_root_redirects", "GET /" + H, 302),
            c("head_root_redirects", "HEAD /" + H, 302),
            c("get_healthz_is_ok", "GET /healthz" + H, 200),
            c("post_root_is_405", "POST /" + H, 405),
            c("lowercase_get_is_unknown_method", "get /" + H, 405),
            c("delete_healthz_is_405", "DELETE /healthz" + H, 405),
            c("other_path_is_404", "GET /x" + H, 404),
            c("post_other_path_is_404", "POST /x" + H, 404),
            c("encoded_slash_is_not_root", "GET /%2F" + H, 404),
            c("double_slash_is_not_root", "GET //" + H, 404),
            c("index_html_is_not_root", "GET /index.html" + H, 404),
            c("query_keeps_root", "GET /?r=7" + H, 302),
            c("healthz_with_query_is_ok", "GET /healthz?x" + H, 200),
            c("absolute_form_root_redirects", "GET http://a/" + H, 302),
            c("absolute_form_scheme_is_case_insensitive", "GET HTTP://a/healthz" + H, 200),
            c("absolute_form_without_path_is_root", "GET http://a" + H, 302),
            c("absolute_form_without_path_keeps_query", "GET http://a?seed=x" + H, 302),
            c("absolute_form_other_path_is_404", "GET http://a/x" + H, 404),
            c("absolute_form_fragment_is_not_root", "GET http://a#x" + H, 404),
            c("asterisk_form_is_400", "GET *" + H, 400),
            c("authority_form_is_400", "GET a:80" + H, 400),
            c("relative_path_is_400", "GET index.html" + H, 400),
            c("scheme_without_authority_is_400", "GET http:///" + H, 400),
            c("method_not_a_token_is_400", "G(T /" + H, 400),
            // rule 1
            c("leading_crlf_is_ignored", "\r\n\r\nGET /" + H, 302),
            c("leading_lf_is_ignored", "\n\nGET /" + H, 302),
            c("only_empty_lines_need_more", "\r\n\r\n", 0),
            // rule 2
            c("bare_lf_line_ends_are_accepted", "GET / HTTP/1.1\nHost: a\n\n", 302),
            c("mixed_line_ends_are_accepted", "GET / HTTP/1.1\r\nHost: a\n\r\n", 302),
            c("bare_cr_in_field_is_400", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400),
            c("cr_cr_lf_head_end_is_400", "GET / HTTP/1.1\r\nHost: a\r\n\rX", 400),
            c("bare_cr_in_request_line_is_400", "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            c("trailing_cr_needs_more", "GET / HTTP/1.1\r\nHost: a\r\n\r", 0),
            c("lone_cr_needs_more", "\r", 0),
            // rule 3
            c("request_line_of_8192_is_served", big("GET /", 8192 - 14, H), 404),
            c("request_line_of_8193_is_414", big("GET /", 8193 - 14, H), 414),
            c("unterminated_long_request_line_is_414", big("GET /", 9000, ""), 414),
            c("double_space_is_400", "GET  /" + H, 400),
            c("trailing_space_is_400", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
            c("missing_target_is_400", "GET HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            c("non_ascii_target_is_400", "GET /\u00c3\u00a9" + H, 400),
            c("invalid_utf8_target_is_400", "GET /\u00ff" + H, 400),
            c("control_in_target_is_400", "GET /\u0001" + H, 400),
            c("del_in_target_is_400", "GET /\u007f" + H, 400),
            c("tab_in_request_line_is_400", "GET\t/" + H, 400),
            // rule 4
            c("http10_is_served", "GET / HTTP/1.0\r\n\r\n", 302),
            c("http20_is_505", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
            c("http12_is_505", "GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505),
            c("h2_preface_is_505", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
            c("version_without_minor_is_400", "GET / HTTP/1\r\nHost: a\r\n\r\n", 400),
            c("version_with_leading_zero_is_400", "GET / HTTP/01.1\r\nHost: a\r\n\r\n", 400),
            c("huge_version_is_400", "GET / HTTP/4294967295.255\r\nHost: a\r\n\r\n", 400),
            c("lowercase_version_is_400", "GET / http/1.1\r\nHost: a\r\n\r\n", 400),
            c("missing_version_is_400", "GET /\r\nHost: a\r\n\r\n", 400),
            c("bad_target_before_bad_version_is_400", "GET /\u00ff HTTP/2.0\r\n\r\n", 400),
            c("text_after_version_is_400", "GET / HTTP/1.1x\r\nHost: a\r\n\r\n", 400),
            // rule 5
            c("space_before_colon_is_400", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
            c("tab_before_colon_is_400", "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", 400),
            c("obs_fold_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n c\r\n\r\n", 400),
            c("obs_fold_with_tab_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n\tc\r\n\r\n", 400),
            c("leading_space_first_field_is_400", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400),
            c("empty_field_name_is_400", "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", 400),
            c("field_without_colon_is_400", "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400),
            c("nul_in_value_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u0000b\r\n\r\n", 400),
            c("control_in_value_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u0001b\r\n\r\n", 400),
            c("del_in_value_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u007fb\r\n\r\n", 400),
            c("tab_in_value_is_accepted", "GET / HTTP/1.1\r\nHost: a\r\nX: a\tb\r\n\r\n", 302),
            c("obs_text_in_value_is_accepted", "GET / HTTP/1.1\r\nHost: a\r\nX: \u00e9\u00ff\r\n\r\n", 302),
            // rule 6
            c("field_section_of_16384_is_served", big("GET / HTTP/1.1\r\nHost: a\r\nX: ", 16384 - 16, "\r\n\r\n"), 302),
            c("field_section_of_16385_is_431", big("GET / HTTP/1.1\r\nHost: a\r\nX: ", 16385 - 16, "\r\n\r\n"), 431),
            c("unterminated_long_field_section_is_431", big("GET / HTTP/1.1\r\nHost: a\r\nX: ", 17000, ""), 431),
            c("hundred_field_lines_are_served", manyFields(100), 302),
            c("hundred_and_one_field_lines_are_431", manyFields(101), 431),
            c("syntax_error_beats_431", big("GET / HTTP/1.1\r\nHost : a\r\nX: ", 17000, ""), 400),
            // rule 7
            c("missing_host_is_400", "GET / HTTP/1.1\r\n\r\n", 400),
            c("two_identical_hosts_are_400", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400),
            c("uppercase_host_name_counts", "GET / HTTP/1.1\r\nHOST: a\r\n\r\n", 302),
            c("empty_host_is_served", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 302),
            c("host_with_port_is_served", "GET / HTTP/1.1\r\nHost: a.example:8080\r\n\r\n", 302),
            c("ipv6_host_is_served", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", 302),
            c("host_with_slash_is_400", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
            c("host_with_space_is_400", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
            c("host_with_letters_in_port_is_400", "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n", 400),
            c("host_with_userinfo_is_400", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400),
            c("unclosed_ip_literal_is_400", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
            c("empty_ip_literal_is_400", "GET / HTTP/1.1\r\nHost: []\r\n\r\n", 400),
            c("http10_with_two_hosts_is_400", "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400),
            c("host_with_empty_port_is_served", "GET / HTTP/1.1\r\nHost: a:\r\n\r\n", 302),
            c("http10_without_host_is_served", "GET / HTTP/1.0\r\n\r\n", 302),
            // rule 8
            c("content_length_is_served", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", 404),
            c("content_length_of_18_digits_is_served", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 000000000000000001\r\n\r\n", 302),
            c("content_length_of_19_digits_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000000000000000\r\n\r\n", 400),
            c("signed_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", 400),
            c("negative_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
            c("underscore_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1_0\r\n\r\n", 400),
            c("empty_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400),
            c("listed_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400),
            c("two_content_lengths_are_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400),
            c("te_with_content_length_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            c("te_on_http10_is_400", "GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            c("two_te_lines_are_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            c("te_not_ending_in_chunked_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
            c("te_with_empty_element_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked\r\n\r\n", 400),
            c("empty_te_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n", 400),
            c("gzip_then_chunked_is_501", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
            c("chunked_is_answered", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n", 302),
            c("host_error_beats_framing_error", "GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400),
            // partial input: refused as soon as the octets decide it
            c("empty_input_needs_more", "", 0),
            c("partial_request_line_needs_more", "GET / HT", 0),
            c("partial_fields_need_more", "GET / HTTP/1.1\r\nHost: a\r\n", 0),
            c("partial_version_needs_more", "GET / HTTP/1.", 0),
            c("partial_field_value_needs_more", "GET / HTTP/1.1\r\nHost: a", 0),
            c("non_ascii_target_is_400_at_its_octet", "GET /\u00e9", 400),
            c("binary_request_line_is_400_before_head_ends", "\u00cd\u0007,\u00d8 / HTTP/1.1\r\n", 400),
            c("bad_version_is_505_before_head_ends", "GET / HTTP/2.0\r\nHost: a\r\n", 505),
            c("short_other_version_needs_more", "GET / HTTP/2", 0),
            c("other_version_is_505_only_at_its_line_end", "GET / HTTP/2.0\r", 0),
            c("bad_octet_after_version_is_400", "GET / HTTP/2.0x", 400),
            c("first_deciding_octet_wins_505_over_later_bare_cr", "GET / HTTP/2.0\r\nHost: a\rX", 505),
            c("first_deciding_octet_wins_414_over_later_bad_octet", big("GET /", 8200, "\u0001"), 414),
            c("bad_field_is_400_before_head_ends", "GET / HTTP/1.1\r\nHost : a\r\n", 400));
    }

    static Arguments c(String name, String input, int status) {
        return Arguments.of(name, input, status);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void head_gets_the_spec_status(String name, String input, int status) {
        assertEquals(status, status(latin1(input)), name);
    }

    @Test
    void head_len_covers_leading_empty_lines_and_head_only() {
        assertEquals(29, complete("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nBODY").headLen);
    }

    @Test
    void partial_reports_droppable_empty_lines() {
        byte[] in = latin1("\r\n\nGE");
        Request r = new Request();
        assertEquals(Parser.PARTIAL, new Parser().parse(in, 0, in.length, r));
        assertEquals(3, r.emptyLines);
    }

    @Test
    void parse_starts_at_the_offset_given() {
        byte[] in = latin1("xxGET /x HTTP/1.1\r\nHost: a\r\n\r\n");
        Request r = new Request();
        assertEquals(Parser.COMPLETE, new Parser().parse(in, 2, in.length, r));
        assertEquals(in.length - 2, r.headLen);
        assertEquals(Request.NOT_FOUND, r.route);
    }

    @Test
    void seed_is_read_from_origin_form_query() {
        Request r = complete("GET /?seed=a HTTP/1.1\r\nHost: a\r\n\r\n");
        assertTrue(r.seeded);
        assertEquals(Seed.fnv1a(latin1("a")), r.seedHash);
    }

    @Test
    void seed_is_read_from_absolute_form_query() {
        Request r = complete("GET http://h/?seed=a HTTP/1.1\r\nHost: a\r\n\r\n");
        assertTrue(r.seeded);
        assertEquals(Seed.fnv1a(latin1("a")), r.seedHash);
    }

    @Test
    void seed_does_not_outlive_its_request() {
        byte[] seeded = latin1("GET /?seed=a HTTP/1.1\r\nHost: a\r\n\r\n"), plain = latin1("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        Parser parser = new Parser();
        Request r = new Request();
        parser.parse(seeded, 0, seeded.length, r);
        parser.parse(plain, 0, plain.length, r);
        assertFalse(r.seeded);
    }

    @Test void http11_keeps_alive_by_default() { assertTrue(complete("GET / HTTP/1.1\r\nHost: a\r\n\r\n").keepAlive); }
    @Test void connection_close_ends_http11() { assertFalse(complete("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, Close\r\n\r\n").keepAlive); }
    @Test void http10_closes_by_default() { assertFalse(complete("GET / HTTP/1.0\r\n\r\n").keepAlive); }
    @Test void http10_keep_alive_token_persists() { assertTrue(complete("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive); }
    @Test void content_length_is_reported() { assertEquals(12, complete("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n").contentLength); }
    @Test void chunked_is_reported() { assertTrue(complete("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n").chunked); }
    @Test void expect_continue_with_body_is_reported() { assertTrue(complete("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n").expectContinue); }
    @Test void expect_continue_without_body_is_ignored() { assertFalse(complete("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n").expectContinue); }
    @Test void expect_continue_on_http10_is_ignored() { assertFalse(complete("GET / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n").expectContinue); }
    @Test void head_method_is_reported() { assertTrue(complete("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").headMethod); }

    /** The outcome of {@code input} fed one octet per call, as a connection does: "status headLen". */
    static String dripped(byte[] input) {
        Parser parser = new Parser();
        Parser.Progress progress = new Parser.Progress();
        Request r = new Request();
        int dropped = 0;
        for (int end = 1; end <= input.length; end++) {
            // A fresh buffer each time, the held octets at a varying offset, as after a read.
            int offset = end % 3;
            byte[] held = new byte[offset + end - dropped];
            System.arraycopy(input, dropped, held, offset, end - dropped);
            switch (parser.parse(held, offset, held.length, r, progress)) {
                case Parser.COMPLETE:
                    return new int[] {0, 302, 200, 404, 405}[r.route] + " " + (dropped + r.headLen);
                case Parser.ERROR:
                    return r.reject + " -";
                default:
                    dropped += r.emptyLines;
            }
        }
        return "0 -";
    }

    static String whole(byte[] input) {
        Request r = new Request();
        switch (new Parser().parse(input, 0, input.length, r)) {
            case Parser.COMPLETE:
                return new int[] {0, 302, 200, 404, 405}[r.route] + " " + r.headLen;
            case Parser.ERROR:
                return r.reject + " -";
            default:
                return "0 -";
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void head_dripped_octet_by_octet_gets_the_same_answer(String name, String input, int status) {
        byte[] bytes = latin1(input);
        assertEquals(whole(bytes), dripped(bytes), name);
    }

    /** Mutated valid heads (fixed seed, bounded count): parse never throws, a complete head lies within its input. */
    @Test
    void mutated_heads_never_throw() {
        byte[][] base = {
            latin1("GET /?seed=a%41+b HTTP/1.1\r\nHost: a:80\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"),
            latin1("\r\nHEAD http://h/healthz HTTP/1.0\nTransfer-Encoding: gzip, chunked\n\n"),
        };
        byte[] noise = latin1("\r\n :,%\u0000\u007f");
        Random random = new Random(7);
        Parser parser = new Parser();
        Request r = new Request();
        for (int round = 0; round < 20_000; round++) {
            java.io.ByteArrayOutputStream input = new java.io.ByteArrayOutputStream();
            byte[] b = base[round % base.length].clone();
            int at = random.nextInt(b.length);
            switch (random.nextInt(3)) {
                case 0: b[at] = (byte) random.nextInt(256); input.write(b, 0, b.length); break;
                case 1: input.write(b, 0, at); input.write(b, at + 1, b.length - at - 1); break;
                default: input.write(b, 0, at); input.write(noise[random.nextInt(noise.length)]); input.write(b, at, b.length - at);
            }
            byte[] in = input.toByteArray();
            if (parser.parse(in, 0, in.length, r) == Parser.COMPLETE) assertTrue(r.headLen <= in.length);
            if (round % 10 == 0) assertEquals(whole(in), dripped(in), "dripped: " + new String(in, StandardCharsets.ISO_8859_1));
        }
    }
}
