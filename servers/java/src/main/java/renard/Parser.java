package renard;

/**
 * Request heads (SPEC §2, §5, §6, §7.1): one entry point, {@link #parse}, with three outcomes.
 *
 * <p>One pass over the octets, each looked at once through a 256-entry class table. Every
 * check of rules 1–6 is made at the octet that decides it (SPEC §5: a bad octet, an
 * over-long line or section is answered at once, in the order the octets arrive); rules 7–9
 * need the whole head and are applied at its empty line, from facts gathered on the way.
 * This is the flagship's order of decisions (servers/rust/src/request.rs), so that both
 * answer alike on any input. One parser per event loop; not thread-safe.
 */
final class Parser {
    /** The three outcomes of {@link #parse}. */
    static final int COMPLETE = 0, PARTIAL = 1, ERROR = 2;

    /** Longest request line served, in octets without its line end (SPEC §5 rule 3). */
    static final int MAX_REQUEST_LINE = 8192;
    /** Longest field section, from after the request line to the empty line (rule 6). */
    static final int MAX_FIELD_SECTION = 16384;
    /** Most field lines in one head (rule 6). */
    static final int MAX_FIELD_LINES = 100;

    // Octet classes (bit flags).
    private static final byte TCHAR = 1, VCHAR = 2, FIELD_VALUE = 4, HOST = 8;
    private static final byte[] CLASS = new byte[256];
    static {
        for (int b = 0; b < 256; b++) {
            boolean alnum = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9');
            int c = 0;
            if (alnum || "!#$%&'*+-.^_`|~".indexOf(b) >= 0) c |= TCHAR;
            if (b >= 0x21 && b <= 0x7e) c |= VCHAR | FIELD_VALUE;
            if (b == ' ' || b == '\t' || b >= 0x80) c |= FIELD_VALUE;
            if (alnum || "-._~!$&'()*+,;=%".indexOf(b) >= 0) c |= HOST;
            CLASS[b] = (byte) c;
        }
    }

    private static boolean is(byte b, int cls) {
        return (CLASS[b & 0xff] & cls) != 0;
    }

    /**
     * Where the pass over one head stands, kept across reads (one per connection), so that a
     * head dripped octet by octet costs O(n) in all: positions count from the head's first
     * octet (the caller drops leading empty lines, see {@link Request#emptyLines}).
     */
    static final class Progress {
        private static final int START = 0, METHOD = 1, TARGET = 2, VERSION = 3, LINE_START = 4, NAME = 5,
                VALUE_START = 6, VALUE = 7;
        /** The next octet to look at. */
        private int pos;
        private int state;
        /** The SP after the method, the SP after the target, the field section's start. */
        private int methodEnd, targetEnd, fieldsStart;
        /** The field line being read: its start, its name's end, its value's start. */
        private int lineStart, nameEnd, valueStart;
        private int fieldLines;
        private boolean http10;
        // What the field lines said (rules 7, 8; SPEC §7.1).
        private int hostLines, contentLengthLines, transferEncodingLines;
        private boolean badHost, close, keepAliveToken, expectContinue;
        /** -1: absent or not 1 to 18 digits. */
        private long contentLength;
        private int teStart, teEnd;

        /** Forget the head: the next parse starts a new one. */
        void reset() {
            pos = state = methodEnd = targetEnd = fieldsStart = lineStart = nameEnd = valueStart = fieldLines = 0;
            hostLines = contentLengthLines = transferEncodingLines = teStart = teEnd = 0;
            http10 = badHost = close = keepAliveToken = expectContinue = false;
            contentLength = -1;
        }

        Progress() {
            reset();
        }
    }

    /**
     * Go on with the head at {@code in[from, to)} from where {@code p} stands. COMPLETE:
     * {@code r.headLen} and the request's fields are set; PARTIAL: more input is needed, and
     * the caller drops the first {@code r.emptyLines} octets and calls again with the same
     * octets and more after them; ERROR: {@code r.reject} is the status. After COMPLETE or
     * ERROR the caller resets {@code p} before the next request. Octets before {@code p}'s
     * position are not looked at again (but for a CR at the very end, which waits for its LF).
     */
    int parse(byte[] in, int from, int to, Request r, Progress p) {
        int at = from;
        if (p.state == Progress.START) {
            // Rule 1: empty lines before the request line are dropped as they come.
            while (true) {
                if (at == to) return partial(r, at - from);
                if (in[at] == '\n') {
                    at++;
                } else if (in[at] == '\r') {
                    if (at + 1 == to) return partial(r, at - from);
                    if (in[at + 1] != '\n') return refuse(r, 400);
                    at += 2;
                } else {
                    break;
                }
            }
            p.state = Progress.METHOD;
        }
        int status = head(in, at, to, r, p);
        if (status == PARTIAL_HEAD) return partial(r, at - from);
        if (status != 0) return refuse(r, status);
        r.headLen += at - from;
        return COMPLETE;
    }

    /** Parse a whole head from scratch (tests). */
    int parse(byte[] in, int from, int to, Request r) {
        return parse(in, from, to, r, new Progress());
    }

    private static int partial(Request r, int emptyLines) {
        r.emptyLines = emptyLines;
        return PARTIAL;
    }

    private static int refuse(Request r, int status) {
        r.reject = status;
        return ERROR;
    }

    /** {@link #head}'s result when the input ends before the head does. */
    private static final int PARTIAL_HEAD = -1;

    /**
     * Rules 2–6 octet by octet from {@code p}'s position over the head at {@code in[base, to)}
     * (it starts with the request line), then rules 7–9 at the empty line: 0 with {@code r}
     * filled ({@code r.headLen} counted from {@code base}), PARTIAL_HEAD, or a status.
     */
    private int head(byte[] in, int base, int to, Request r, Progress p) {
        int len = to - base;
        int pos = p.pos;
        int status;
        loop:
        while (true) {
            switch (p.state) {
                case Progress.METHOD:
                    while (pos < len && is(in[base + pos], TCHAR)) pos++;
                    if (pos > MAX_REQUEST_LINE) return 414;
                    if (pos == len) break loop;
                    if (in[base + pos] != ' ' || pos == 0) return 400;
                    p.methodEnd = pos++;
                    p.state = Progress.TARGET;
                    break;
                case Progress.TARGET: // visible ASCII (rule 3)
                    while (pos < len && is(in[base + pos], VCHAR)) pos++;
                    if (pos > MAX_REQUEST_LINE) return 414;
                    if (pos == len) break loop;
                    if (in[base + pos] != ' ' || pos == p.methodEnd + 1) return 400;
                    p.targetEnd = pos++;
                    p.state = Progress.VERSION;
                    break;
                case Progress.VERSION: { // HTTP/ DIGIT . DIGIT, octet by octet (rule 4)
                    int version = p.targetEnd + 1;
                    while (pos < len && fitsVersion(in[base + pos], pos - version)) pos++;
                    if (pos > MAX_REQUEST_LINE) return 414;
                    if (pos == len) break loop;
                    byte b = in[base + pos];
                    if (pos - version != 8 || (b != '\r' && b != '\n')) return 400;
                    int end = lineEnd(in, base + pos, to);
                    if (end == BARE_CR) return 400;
                    if (end == CUT) break loop;
                    byte major = in[base + version + 5], minor = in[base + version + 7];
                    if (major != '1' || (minor != '0' && minor != '1')) return 505;
                    p.http10 = minor == '0';
                    pos = end - base;
                    p.fieldsStart = pos;
                    p.state = Progress.LINE_START;
                    break;
                }
                case Progress.LINE_START: {
                    if (pos == len) break loop;
                    byte b = in[base + pos];
                    if (b == '\r' || b == '\n') {
                        int end = lineEnd(in, base + pos, to);
                        if (end == BARE_CR) return 400;
                        if (end == CUT) break loop;
                        if (end - base - p.fieldsStart > MAX_FIELD_SECTION) return 431;
                        r.headLen = end - base;
                        return interpret(in, base, p, r);
                    }
                    if (!is(b, TCHAR)) return 400; // SP/HTAB: obs-fold (rule 5)
                    p.lineStart = pos;
                    p.state = Progress.NAME;
                    break;
                }
                case Progress.NAME:
                    while (pos < len && is(in[base + pos], TCHAR)) pos++;
                    if (pos - p.fieldsStart > MAX_FIELD_SECTION) return 431;
                    if (pos == len) break loop;
                    if (in[base + pos] != ':') return 400; // whitespace before the colon, any non-token
                    p.nameEnd = pos++;
                    p.state = Progress.VALUE_START;
                    break;
                case Progress.VALUE_START:
                    while (pos < len && (in[base + pos] == ' ' || in[base + pos] == '\t')) pos++;
                    if (pos - p.fieldsStart > MAX_FIELD_SECTION) return 431;
                    if (pos == len) break loop;
                    p.valueStart = pos;
                    p.state = Progress.VALUE;
                    break;
                default: { // VALUE
                    while (pos < len && is(in[base + pos], FIELD_VALUE)) pos++;
                    if (pos - p.fieldsStart > MAX_FIELD_SECTION) return 431;
                    if (pos == len) break loop;
                    byte b = in[base + pos];
                    if (b != '\r' && b != '\n') return 400; // a control octet or DEL (rule 5)
                    int end = lineEnd(in, base + pos, to);
                    if (end == BARE_CR) return 400;
                    if (end == CUT) break loop;
                    if (++p.fieldLines > MAX_FIELD_LINES) return 431;
                    note(in, base + p.lineStart, base + p.nameEnd, base + p.valueStart,
                            Ascii.trimEnd(in, base + p.valueStart, base + pos), p);
                    pos = end - base;
                    if (pos - p.fieldsStart > MAX_FIELD_SECTION) return 431;
                    p.state = Progress.LINE_START;
                }
            }
        }
        p.pos = pos;
        return PARTIAL_HEAD;
    }

    private static boolean fitsVersion(byte b, int i) {
        switch (i) {
            case 0: return b == 'H';
            case 1: case 2: return b == 'T';
            case 3: return b == 'P';
            case 4: return b == '/';
            case 5: case 7: return b >= '0' && b <= '9';
            case 6: return b == '.';
            default: return false;
        }
    }

    /** {@link #lineEnd} results: cut short by the end of input, or a CR without LF. */
    private static final int CUT = -1, BARE_CR = -2;

    /** The end of the CRLF or LF at {@code i}, or CUT, or BARE_CR (rule 2). */
    private static int lineEnd(byte[] in, int i, int to) {
        if (in[i] == '\n') return i + 1;
        if (i + 1 == to) return CUT;
        return in[i + 1] == '\n' ? i + 2 : BARE_CR;
    }

    /** Record what a field line says; its value (OWS trimmed) is {@code in[value, valueEnd)}. */
    private static void note(byte[] in, int name, int nameEnd, int value, int valueEnd, Progress p) {
        int nameLen = nameEnd - name;
        if (Ascii.equalsIgnoreCase(in, name, nameLen, "host")) {
            p.hostLines++;
            p.badHost |= !isValidHost(in, value, valueEnd);
        } else if (Ascii.equalsIgnoreCase(in, name, nameLen, "content-length")) {
            p.contentLengthLines++;
            p.contentLength = parseContentLength(in, value, valueEnd);
        } else if (Ascii.equalsIgnoreCase(in, name, nameLen, "transfer-encoding")) {
            p.transferEncodingLines++;
            p.teStart = value - (name - p.lineStart);
            p.teEnd = valueEnd - (name - p.lineStart);
        } else if (Ascii.equalsIgnoreCase(in, name, nameLen, "connection")) {
            for (int t = value; t <= valueEnd; ) {
                int comma = indexOf(in, t, valueEnd, (byte) ',');
                int tokenEnd = comma < 0 ? valueEnd : comma;
                int a = Ascii.trimStart(in, t, tokenEnd), b = Ascii.trimEnd(in, a, tokenEnd);
                p.close |= Ascii.equalsIgnoreCase(in, a, b - a, "close");
                p.keepAliveToken |= Ascii.equalsIgnoreCase(in, a, b - a, "keep-alive");
                t = tokenEnd + 1;
            }
        } else if (Ascii.equalsIgnoreCase(in, name, nameLen, "expect")) {
            p.expectContinue = Ascii.equalsIgnoreCase(in, value, valueEnd - value, "100-continue");
        }
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

    /** Rules 7–9 on a head that passed rules 1–6: 0 with {@code r} filled, or a status. */
    private static int interpret(byte[] in, int start, Progress p, Request r) {
        int methodEnd = start + p.methodEnd, targetEnd = start + p.targetEnd;
        boolean http10 = p.http10;
        long contentLength = p.contentLength;
        if (p.badHost) return 400;
        // Rule 7: exactly one Host on HTTP/1.1, at most one on HTTP/1.0.
        if (p.hostLines > 1 || (!http10 && p.hostLines == 0)) return 400;
        // Rule 8.
        if (p.contentLengthLines > 1 || (p.contentLengthLines == 1 && contentLength < 0)) return 400;
        boolean chunked = false;
        if (p.transferEncodingLines > 0) {
            if (p.contentLengthLines > 0 || http10 || p.transferEncodingLines > 1) return 400;
            int status = checkTransferCodings(in, start + p.teStart, start + p.teEnd);
            if (status != 0) return status;
            chunked = true;
        }
        // Rule 9: the route.
        int target = methodEnd + 1;
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
        int methodLen = methodEnd - start;
        boolean head = Ascii.equals(in, start, methodLen, "HEAD");
        boolean readable = head || Ascii.equals(in, start, methodLen, "GET");
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
        r.keepAlive = !p.close && (!http10 || p.keepAliveToken);
        r.contentLength = Math.max(contentLength, 0);
        r.chunked = chunked;
        r.expectContinue = p.expectContinue && !http10 && contentLength > 0;
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
                if (!(is(in[i], HOST) && in[i] != '%') && in[i] != ':') return false;
            }
            rest = close + 1;
        } else {
            int colon = indexOf(in, from, to, (byte) ':');
            rest = colon < 0 ? to : colon;
            for (int i = from; i < rest; i++) {
                if (!is(in[i], HOST)) return false;
            }
        }
        if (rest == to) return true;
        if (in[rest] != ':') return false;
        for (int i = rest + 1; i < to; i++) {
            if (!isDigit(in[i])) return false;
        }
        return true;
    }

}
