package renard;

/**
 * Request heads (SPEC §2, §5, §6, §7.1): one entry point, {@link #parse}, with three outcomes.
 * The checks run in the order SPEC §5 lists them: leading empty lines (rule 1), the head's
 * end with bare CR and the size limits (rules 2, 3, 6: {@link #scan}), the grammar
 * ({@link Syntax}, rules 3–5), then Host, framing and route (rules 7–9: {@link #interpret}).
 * A head cut short is still checked, so that garbage is refused at once rather than at the
 * header deadline. One parser per event loop; not thread-safe.
 */
final class Parser {
    /** The three outcomes of {@link #parse}. */
    static final int COMPLETE = 0, PARTIAL = 1, ERROR = 2;

    /** Longest request line served, in octets without its line end (SPEC §5 rule 3). */
    static final int MAX_REQUEST_LINE = 8192;
    /** Longest field section, from after the request line to the empty line (rule 6). */
    static final int MAX_FIELD_SECTION = 16384;
    /** Most field lines in one head (rule 6). */
    static final int MAX_FIELD_LINES = Syntax.MAX_FIELDS;

    // scan() results that are not a head end (a head end is >= 0).
    private static final int INCOMPLETE = -1, OVERSIZED = -2, SCAN_BAD = -3, SCAN_URI_TOO_LONG = -4;

    private final Syntax syntax = new Syntax();

    /**
     * Parse the head at {@code in[from, to)} into {@code r}. COMPLETE: {@code r.headLen} and
     * the request's fields are set; PARTIAL: more input is needed, {@code r.emptyLines}
     * leading octets may be dropped; ERROR: {@code r.reject} is the status.
     */
    int parse(byte[] in, int from, int to, Request r) {
        int start = leadingEmptyLines(in, from, to);
        int shape = scan(in, start, to);
        switch (shape) {
            case SCAN_BAD:
                return refuse(r, 400);
            case SCAN_URI_TOO_LONG:
                return refuse(r, 414);
            case OVERSIZED:
                return refuse(r, oversized(in, start, to));
            case INCOMPLETE: {
                int status = checkSyntax(in, start, to, MAX_FIELD_LINES);
                if (status != 0) return refuse(r, status);
                r.emptyLines = start - from;
                return PARTIAL;
            }
            default: {
                int status = checkSyntax(in, start, shape, MAX_FIELD_LINES);
                if (status == 0) status = interpret(in, r);
                if (status != 0) return refuse(r, status);
                r.headLen = shape - from;
                return COMPLETE;
            }
        }
    }

    private static int refuse(Request r, int status) {
        r.reject = status;
        return ERROR;
    }

    /** End of the CRLF or LF empty lines at {@code from} (rule 1); a lone trailing CR stays. */
    private static int leadingEmptyLines(byte[] in, int from, int to) {
        int i = from;
        while (i < to) {
            if (in[i] == '\n') {
                i++;
            } else if (in[i] == '\r' && i + 1 < to && in[i + 1] == '\n') {
                i += 2;
            } else {
                break;
            }
        }
        return i;
    }

    /**
     * Find the end of the head in {@code in[start, to)} (no leading empty lines) while
     * enforcing rule 2 (bare CR) and the limits of rules 3 and 6: the index after the empty
     * line, or INCOMPLETE, OVERSIZED, SCAN_BAD, SCAN_URI_TOO_LONG.
     */
    private static int scan(byte[] in, int start, int to) {
        int lineStart = start;
        int fieldsStart = -1; // index after the request line's LF
        int fieldLines = 0;
        int i = start;
        for (; i < to; i++) {
            byte b = in[i];
            if (b == '\r') {
                if (i + 1 == to) break;
                if (in[i + 1] != '\n') return SCAN_BAD;
            } else if (b == '\n') {
                int contentEnd = i > lineStart && in[i - 1] == '\r' ? i - 1 : i;
                if (fieldsStart < 0) {
                    if (contentEnd - start > MAX_REQUEST_LINE) return SCAN_URI_TOO_LONG;
                    fieldsStart = i + 1;
                } else {
                    if (i + 1 - fieldsStart > MAX_FIELD_SECTION) return OVERSIZED;
                    if (contentEnd == lineStart) return i + 1;
                    if (++fieldLines > MAX_FIELD_LINES) return OVERSIZED;
                }
                lineStart = i + 1;
            }
        }
        if (fieldsStart < 0) return i - start > MAX_REQUEST_LINE ? SCAN_URI_TOO_LONG : INCOMPLETE;
        return i - fieldsStart > MAX_FIELD_SECTION ? OVERSIZED : INCOMPLETE;
    }

    /** The answer to a head past the rule 6 limits: rules 3–5 still come first. */
    private int oversized(byte[] in, int start, int to) {
        int end = Math.min(to, start + MAX_REQUEST_LINE + 2 + MAX_FIELD_SECTION + 1);
        int status = checkSyntax(in, start, end, Integer.MAX_VALUE);
        return status == 0 ? 431 : status;
    }

    /** Rules 3–5 on {@code in[start, end)}, whole or cut short: 0 when nothing is wrong yet. */
    private int checkSyntax(byte[] in, int start, int end, int limit) {
        switch (syntax.check(in, start, end, limit)) {
            case Syntax.VERSION:
                return versionError(in, start, end);
            case Syntax.TOO_MANY:
                return 431;
            case Syntax.BAD:
                return 400;
            default:
                return syntax.targetEnd > syntax.targetStart && !visibleAscii(in, syntax.targetStart, syntax.targetEnd) ? 400 : 0;
        }
    }

    /** Rule 3: visible ASCII only. */
    private static boolean visibleAscii(byte[] in, int from, int to) {
        for (int i = from; i < to; i++) {
            if (in[i] < 0x21 || in[i] > 0x7e) return false;
        }
        return true;
    }

    /**
     * Rule 4, for a request line whose version was refused: 505 for another
     * {@code HTTP/DIGIT.DIGIT} after a well-formed method and target, else 400.
     */
    private static int versionError(byte[] in, int start, int end) {
        int lineEnd = start;
        while (lineEnd < end && in[lineEnd] != '\n') lineEnd++;
        if (lineEnd > start && in[lineEnd - 1] == '\r') lineEnd--;
        int sp1 = indexOf(in, start, lineEnd, (byte) ' ');
        int sp2 = sp1 < 0 ? -1 : indexOf(in, sp1 + 1, lineEnd, (byte) ' ');
        if (sp2 < 0 || indexOf(in, sp2 + 1, lineEnd, (byte) ' ') >= 0) return 400;
        boolean wellFormed = sp1 > start && sp2 > sp1 + 1 && visibleAscii(in, sp1 + 1, sp2);
        for (int i = start; i < sp1; i++) wellFormed &= Syntax.isTchar(in[i]);
        int v = sp2 + 1;
        boolean digitDotDigit = lineEnd - v == 8 && Syntax.startsWith(in, v, "HTTP/")
                && isDigit(in[v + 5]) && in[v + 6] == '.' && isDigit(in[v + 7]);
        return wellFormed && digitDotDigit ? 505 : 400;
    }

    private static int indexOf(byte[] in, int from, int to, byte b) {
        for (int i = from; i < to; i++) {
            if (in[i] == b) return i;
        }
        return -1;
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    /** Rules 7–9 on the head {@link #syntax} accepted: 0 with {@code r} filled, or a status. */
    private int interpret(byte[] in, Request r) {
        Syntax s = syntax;
        boolean http10 = s.minor == 0;
        int hostLines = 0, contentLengthLines = 0, transferEncodingLines = 0;
        long contentLength = -1;
        int teStart = 0, teEnd = 0;
        boolean close = false, keepAliveToken = false, expectContinue = false;
        for (int f = 0; f < s.fields; f++) {
            int name = s.nameStart[f], nameLen = s.nameEnd[f] - name;
            int value = s.valueStart[f], valueEnd = s.valueEnd[f];
            if (Ascii.equalsIgnoreCase(in, name, nameLen, "host")) {
                hostLines++;
                if (!isValidHost(in, value, valueEnd)) return 400;
            } else if (Ascii.equalsIgnoreCase(in, name, nameLen, "content-length")) {
                contentLengthLines++;
                contentLength = parseContentLength(in, value, valueEnd);
            } else if (Ascii.equalsIgnoreCase(in, name, nameLen, "transfer-encoding")) {
                transferEncodingLines++;
                teStart = value;
                teEnd = valueEnd;
            } else if (Ascii.equalsIgnoreCase(in, name, nameLen, "connection")) {
                for (int t = value; t <= valueEnd; ) {
                    int comma = indexOf(in, t, valueEnd, (byte) ',');
                    int tokenEnd = comma < 0 ? valueEnd : comma;
                    int a = Ascii.trimStart(in, t, tokenEnd), b = Ascii.trimEnd(in, a, tokenEnd);
                    close |= Ascii.equalsIgnoreCase(in, a, b - a, "close");
                    keepAliveToken |= Ascii.equalsIgnoreCase(in, a, b - a, "keep-alive");
                    t = tokenEnd + 1;
                }
            } else if (Ascii.equalsIgnoreCase(in, name, nameLen, "expect")) {
                expectContinue = Ascii.equalsIgnoreCase(in, value, valueEnd - value, "100-continue");
            }
        }
        // Rule 7: exactly one Host on HTTP/1.1, at most one on HTTP/1.0.
        if (hostLines > 1 || (!http10 && hostLines == 0)) return 400;
        // Rule 8.
        if (contentLengthLines > 1 || (contentLengthLines == 1 && contentLength < 0)) return 400;
        boolean chunked = false;
        if (transferEncodingLines > 0) {
            if (contentLengthLines > 0 || http10 || transferEncodingLines > 1) return 400;
            int status = checkTransferCodings(in, teStart, teEnd);
            if (status != 0) return status;
            chunked = true;
        }
        // Rule 9: the route.
        int target = s.targetStart, targetEnd = s.targetEnd;
        int pathStart;
        if (in[target] == '/') {
            pathStart = target;
        } else {
            int afterScheme = Ascii.startsWithIgnoreCase(in, target, targetEnd, "http://") ? target + 7
                    : Ascii.startsWithIgnoreCase(in, target, targetEnd, "https://") ? target + 8 : -1;
            if (afterScheme < 0) return 400;
            int authorityEnd = afterScheme;
            while (authorityEnd < targetEnd && in[authorityEnd] != '/' && in[authorityEnd] != '?' && in[authorityEnd] != '#') {
                authorityEnd++;
            }
            if (authorityEnd == afterScheme) return 400;
            pathStart = authorityEnd;
        }
        int query = indexOf(in, pathStart, targetEnd, (byte) '?');
        int pathEnd = query < 0 ? targetEnd : query;
        int pathLen = pathEnd - pathStart;
        boolean root = pathLen == 0 || (pathLen == 1 && in[pathStart] == '/');
        boolean health = !root && Ascii.equals(in, pathStart, pathLen, "/healthz");
        int methodLen = s.methodEnd - s.methodStart;
        boolean head = Ascii.equals(in, s.methodStart, methodLen, "HEAD");
        boolean readable = head || Ascii.equals(in, s.methodStart, methodLen, "GET");
        r.seeded = false;
        if (root && readable) {
            r.route = Request.REDIRECT;
            if (query >= 0) Seed.find(in, query + 1, targetEnd, r);
        } else if (health && readable) {
            r.route = Request.HEALTH;
        } else if (root || health) {
            r.route = Request.METHOD_NOT_ALLOWED;
        } else {
            r.route = Request.NOT_FOUND;
        }
        r.headMethod = head;
        r.http10 = http10;
        r.keepAlive = !close && (!http10 || keepAliveToken);
        r.contentLength = Math.max(contentLength, 0);
        r.chunked = chunked;
        r.expectContinue = expectContinue && !http10 && contentLength > 0;
        return 0;
    }

    /**
     * Rule 8 on a {@code Transfer-Encoding} value: the last coding is {@code chunked} and no
     * element is empty (else 400); codings before it are not implemented (501).
     */
    private static int checkTransferCodings(byte[] in, int from, int to) {
        int count = 0, lastStart = from, lastEnd = from;
        for (int t = from; t <= to; ) {
            int comma = indexOf(in, t, to, (byte) ',');
            int end = comma < 0 ? to : comma;
            int a = Ascii.trimStart(in, t, end), b = Ascii.trimEnd(in, a, end);
            if (a == b) return 400;
            count++;
            lastStart = a;
            lastEnd = b;
            t = end + 1;
        }
        if (!Ascii.equalsIgnoreCase(in, lastStart, lastEnd - lastStart, "chunked")) return 400;
        return count > 1 ? 501 : 0;
    }

    /** {@code Content-Length}: 1 to 18 digits, nothing else (rule 8); -1 when invalid. */
    private static long parseContentLength(byte[] in, int from, int to) {
        if (to == from || to - from > 18) return -1;
        long n = 0;
        for (int i = from; i < to; i++) {
            if (!isDigit(in[i])) return -1;
            n = n * 10 + (in[i] - '0');
        }
        return n;
    }

    /**
     * Rule 7: empty, or {@code host [":" port]} with host a reg-name/IPv4 (unreserved,
     * sub-delims, {@code %}) or an IP-literal in brackets, port digits.
     */
    private static boolean isValidHost(byte[] in, int from, int to) {
        if (from == to) return true;
        int rest;
        if (in[from] == '[') {
            int close = indexOf(in, from, to, (byte) ']');
            if (close < 0 || close == from + 1) return false;
            for (int i = from + 1; i < close; i++) {
                if (!isUnreservedOrSubDelim(in[i]) && in[i] != ':') return false;
            }
            rest = close + 1;
        } else {
            int colon = indexOf(in, from, to, (byte) ':');
            rest = colon < 0 ? to : colon;
            for (int i = from; i < rest; i++) {
                if (!isUnreservedOrSubDelim(in[i]) && in[i] != '%') return false;
            }
        }
        if (rest == to) return true;
        if (in[rest] != ':') return false;
        for (int i = rest + 1; i < to; i++) {
            if (!isDigit(in[i])) return false;
        }
        return true;
    }

    /** RFC 3986 unreserved / sub-delims. */
    private static boolean isUnreservedOrSubDelim(byte b) {
        return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || isDigit(b) || "-._~!$&'()*+,;=".indexOf(b) >= 0;
    }
}
