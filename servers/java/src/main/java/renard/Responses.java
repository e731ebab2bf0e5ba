package renard;

import java.nio.charset.StandardCharsets;

/**
 * Response bytes (SPEC §4). Everything that does not change is rendered once: the 302 status
 * and {@code Location} lines per k when N is small (else from the template's pieces), the
 * fixed lines of every other status. The {@code Date} line is the caller's ({@link DateLine}).
 */
final class Responses {
    /** {@code Connection} field of a response (SPEC §4, §7). */
    static final int KEEP_OPEN = 0, KEEP_ALIVE = 1, CLOSE = 2;

    /** Most k whose 302 head is rendered ahead of time, and most octets spent on them. */
    private static final int PRERENDER_MAX_COUNT = 256, PRERENDER_MAX_BYTES = 64 * 1024;

    private static final byte[] REDIRECT_START = ascii("HTTP/1.1 302 Found\r\nLocation: ");
    private static final byte[] CRLF = ascii("\r\n");
    private static final byte[] NO_STORE = ascii("Cache-Control: no-store\r\n");
    private static final byte[] CACHEABLE = ascii("Cache-Control: public, max-age=86400\r\n");
    private static final byte[] HEALTH = ascii("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n");
    private static final byte[] BODY = ascii("ok\n");
    private static final byte[] NOT_FOUND = ascii("HTTP/1.1 404 Not Found\r\n");
    private static final byte[] NOT_ALLOWED = ascii("HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n");
    /** Tails by [body ? 1 : 0][persistence]. */
    private static final byte[][][] TAILS = {
        {ascii("Content-Length: 0\r\n\r\n"), ascii("Content-Length: 0\r\nConnection: keep-alive\r\n\r\n"),
         ascii("Content-Length: 0\r\nConnection: close\r\n\r\n")},
        {ascii("Content-Length: 3\r\n\r\n"), ascii("Content-Length: 3\r\nConnection: keep-alive\r\n\r\n"),
         ascii("Content-Length: 3\r\nConnection: close\r\n\r\n")},
    };

    /** The status line of a refusal (SPEC §4), by status. */
    static byte[] refusalLine(int status) {
        switch (status) {
            case 400: return REFUSED_400;
            case 408: return REFUSED_408;
            case 414: return REFUSED_414;
            case 431: return REFUSED_431;
            case 501: return REFUSED_501;
            case 505: return REFUSED_505;
            default: throw new IllegalArgumentException("not a refusal: " + status);
        }
    }

    private static final byte[] REFUSED_400 = ascii("HTTP/1.1 400 Bad Request\r\n");
    private static final byte[] REFUSED_408 = ascii("HTTP/1.1 408 Request Timeout\r\n");
    private static final byte[] REFUSED_414 = ascii("HTTP/1.1 414 URI Too Long\r\n");
    private static final byte[] REFUSED_431 = ascii("HTTP/1.1 431 Request Header Fields Too Large\r\n");
    private static final byte[] REFUSED_501 = ascii("HTTP/1.1 501 Not Implemented\r\n");
    private static final byte[] REFUSED_505 = ascii("HTTP/1.1 505 HTTP Version Not Supported\r\n");

    /** {@code HTTP/1.1 302 Found\r\nLocation: …\r\n} for k = 1..N, when N is small; else null. */
    private final byte[][] heads;
    /** The template split at each {@code {n}} (one more piece than placeholders). */
    private final byte[][] pieces;
    /** The longest response any status can produce, in octets. */
    final int maxResponse;

    Responses(byte[] template, int count) {
        pieces = split(template);
        int perK = REDIRECT_START.length + template.length + 2 * 7;
        if (count <= PRERENDER_MAX_COUNT && perK * count <= PRERENDER_MAX_BYTES) {
            heads = new byte[count][];
            Out out = new Out(perK * 4 + 64);
            for (int k = 1; k <= count; k++) {
                out.len = 0;
                renderHead(out, k);
                heads[k - 1] = java.util.Arrays.copyOf(out.buf, out.len);
            }
        } else {
            heads = null;
        }
        // Seven digits for k <= 1 000 000; 192 covers every other line of any response.
        maxResponse = REDIRECT_START.length + template.length + 7 * (pieces.length - 1) + 2 + 192;
    }

    /** Append the status line and {@code Location} line for k. */
    void writeHead(Out out, int k) {
        if (heads != null) {
            out.append(heads[k - 1]);
        } else {
            renderHead(out, k);
        }
    }

    private void renderHead(Out out, int k) {
        out.append(REDIRECT_START);
        for (int p = 0; p < pieces.length; p++) {
            if (p > 0) out.appendDecimal(k);
            out.append(pieces[p]);
        }
        out.append(CRLF);
    }

    /** Append the 302 for k; {@code seeded} selects the cache policy (SPEC §3). */
    void redirect(Out out, int k, boolean seeded, DateLine date, int persistence) {
        writeHead(out, k);
        out.append(seeded ? CACHEABLE : NO_STORE);
        out.append(date.bytes());
        out.append(TAILS[0][persistence]);
    }

    /** Append the 200 {@code ok\n}; {@code head}: no body (RFC 9110 §9.3.2). */
    static void health(Out out, boolean head, DateLine date, int persistence) {
        out.append(HEALTH);
        out.append(date.bytes());
        out.append(TAILS[1][persistence]);
        if (!head) out.append(BODY);
    }

    /** Append a response without body or fields of its own: 404, 405 or a refusal. */
    static void empty(Out out, int status, DateLine date, int persistence) {
        out.append(status == 404 ? NOT_FOUND : status == 405 ? NOT_ALLOWED : refusalLine(status));
        out.append(date.bytes());
        out.append(TAILS[0][persistence]);
    }

    /** {@code template} split at each {@code {n}}. */
    static byte[][] split(byte[] template) {
        java.util.List<byte[]> pieces = new java.util.ArrayList<>();
        int start = 0;
        for (int i = 0; i + 3 <= template.length; ) {
            if (template[i] == '{' && template[i + 1] == 'n' && template[i + 2] == '}') {
                pieces.add(java.util.Arrays.copyOfRange(template, start, i));
                i += 3;
                start = i;
            } else {
                i++;
            }
        }
        pieces.add(java.util.Arrays.copyOfRange(template, start, template.length));
        return pieces.toArray(new byte[0][]);
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
