package renard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** SPEC §4, byte by byte. */
class ResponsesTest {
    private static final byte[] TEMPLATE = Responses.ascii("https://avatar.example.org/Renard-{n}.png");
    /** 2026-11-22 00:00:00 UTC, in milliseconds. */
    private static final long MIDNIGHT = 1_795_305_600_000L;
    private static final String DATE = "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\n";

    static String text(Out out) {
        return new String(out.buf, 0, out.len, StandardCharsets.ISO_8859_1);
    }

    static String redirect(int k, boolean seeded, int persistence, int count) {
        Out out = new Out(16);
        new Responses(TEMPLATE, count).redirect(out, k, seeded, new DateLine(MIDNIGHT), persistence);
        return text(out);
    }

    @Test
    void redirect_is_byte_exact() {
        assertEquals("HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-7.png\r\nCache-Control: no-store\r\n"
                + DATE + "Content-Length: 0\r\n\r\n", redirect(7, false, Responses.KEEP_OPEN, 21));
    }

    @Test
    void seeded_redirect_is_cacheable() {
        assertTrue(redirect(1, true, Responses.KEEP_OPEN, 21).contains("\r\nCache-Control: public, max-age=86400\r\nDate: "));
    }

    @Test
    void large_count_renders_from_pieces_like_prerendered() {
        assertEquals(redirect(21, false, Responses.KEEP_OPEN, 21), redirect(21, false, Responses.KEEP_OPEN, 1_000_000));
    }

    @Test
    void every_placeholder_is_replaced() {
        Out out = new Out(4);
        new Responses(Responses.ascii("/{n}/{n}x{n}"), 5).writeHead(out, 5);
        assertEquals("HTTP/1.1 302 Found\r\nLocation: /5/5x5\r\n", text(out));
    }

    @Test
    void last_k_of_million_is_rendered() {
        Out out = new Out(4);
        new Responses(Responses.ascii("{n}"), 1_000_000).writeHead(out, 1_000_000);
        assertEquals("HTTP/1.1 302 Found\r\nLocation: 1000000\r\n", text(out));
    }

    @Test
    void health_has_type_cache_and_body() {
        Out out = new Out(4);
        Responses.health(out, false, new DateLine(MIDNIGHT), Responses.KEEP_OPEN);
        assertEquals("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n" + DATE
                + "Content-Length: 3\r\n\r\nok\n", text(out));
    }

    @Test
    void head_health_keeps_length_drops_body() {
        Out out = new Out(4);
        Responses.health(out, true, new DateLine(MIDNIGHT), Responses.KEEP_OPEN);
        assertTrue(text(out).endsWith("Content-Length: 3\r\n\r\n"));
    }

    @Test
    void method_not_allowed_carries_allow() {
        Out out = new Out(4);
        Responses.empty(out, 405, new DateLine(MIDNIGHT), Responses.KEEP_OPEN);
        assertEquals("HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n" + DATE + "Content-Length: 0\r\n\r\n", text(out));
    }

    @Test
    void refusal_closes() {
        Out out = new Out(4);
        Responses.empty(out, 431, new DateLine(MIDNIGHT), Responses.CLOSE);
        assertEquals("HTTP/1.1 431 Request Header Fields Too Large\r\n" + DATE + "Content-Length: 0\r\nConnection: close\r\n\r\n", text(out));
    }

    @Test
    void http10_keep_alive_is_announced() {
        Out out = new Out(4);
        Responses.empty(out, 404, new DateLine(MIDNIGHT), Responses.KEEP_ALIVE);
        assertTrue(text(out).endsWith("Content-Length: 0\r\nConnection: keep-alive\r\n\r\n"));
    }

    @Test
    void date_line_changes_only_with_the_second() {
        DateLine date = new DateLine(MIDNIGHT);
        date.update(MIDNIGHT + 999);
        assertEquals(DATE, new String(date.bytes(), StandardCharsets.US_ASCII));
        date.update(MIDNIGHT + 1000);
        assertEquals("Date: Sun, 22 Nov 2026 00:00:01 GMT\r\n", new String(date.bytes(), StandardCharsets.US_ASCII));
    }

    @Test
    void date_line_pads_day_and_handles_leap_years() {
        assertEquals("Date: Thu, 29 Feb 2024 23:59:59 GMT\r\n", new String(new DateLine(1_709_251_199_000L).bytes(), StandardCharsets.US_ASCII));
        assertEquals("Date: Thu, 01 Jan 1970 00:00:00 GMT\r\n", new String(new DateLine(0).bytes(), StandardCharsets.US_ASCII));
    }
}
