package renard;

/**
 * The grammar of a request head, SPEC §5 rules 3–5 (RFC 9112 §3, §5), checked octet by octet
 * over {@code in[from, to)}, which may be cut short. It takes exactly the decisions of the
 * parser behind the flagship (httparse with its defaults), so that both answer alike on any
 * input:
 * <ul>
 * <li>method: one or more tchar, then one SP;</li>
 * <li>target: one or more octets in 0x21–0x7E or 0x80–0xFF, then one SP (the caller refuses
 *     non-ASCII targets);</li>
 * <li>version: exactly {@code HTTP/1.0} or {@code HTTP/1.1}; with fewer than 8 octets
 *     received, a prefix of {@code HTTP/1.} is still partial, anything else is refused at
 *     once; then CRLF or LF;</li>
 * <li>field line: a tchar name, {@code :} at once, SP/HTAB, a value of HTAB, 0x20–0x7E or
 *     0x80–0xFF, then CRLF or LF; a CR must be followed by LF;</li>
 * <li>an empty line (CRLF or LF) ends the head.</li>
 * </ul>
 * Results: {@link #COMPLETE}, {@link #PARTIAL} (the input ends before any error), or an
 * error: {@link #VERSION} (the version octets), {@link #TOO_MANY} (more field lines than
 * allowed), {@link #BAD} (anything else).
 */
final class Syntax {
    static final int COMPLETE = 0, PARTIAL = 1, BAD = 2, VERSION = 3, TOO_MANY = 4;

    /** Most field lines recorded (SPEC §5 rule 6). */
    static final int MAX_FIELDS = 100;

    private static final boolean[] TCHAR = new boolean[256];
    static {
        for (int b = 0; b < 256; b++) {
            TCHAR[b] = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
                    || "!#$%&'*+-.^_`|~".indexOf(b) >= 0;
        }
    }

    static boolean isTchar(int b) {
        return TCHAR[b & 0xff];
    }

    private static boolean isTargetOctet(int b) {
        return (b >= 0x21 && b <= 0x7e) || b >= 0x80;
    }

    private static boolean isValueOctet(int b) {
        return b == '\t' || (b >= 0x20 && b <= 0x7e) || b >= 0x80;
    }

    // What the last check found; positions are absolute indices into the input.
    int methodStart, methodEnd, targetStart, targetEnd;
    /** 0 for HTTP/1.0, 1 for HTTP/1.1; -1 until read. */
    int minor;
    /** Field lines recorded: name and trimmed value ranges. */
    int fields;
    final int[] nameStart = new int[MAX_FIELDS], nameEnd = new int[MAX_FIELDS];
    final int[] valueStart = new int[MAX_FIELDS], valueEnd = new int[MAX_FIELDS];

    /**
     * Check {@code in[from, to)}. {@code limit}: most field lines allowed (more is
     * {@link #TOO_MANY}); only the first {@link #MAX_FIELDS} are recorded. Sets
     * {@link #targetEnd} above {@link #targetStart} once the target is whole.
     */
    int check(byte[] in, int from, int to, int limit) {
        methodStart = methodEnd = targetStart = targetEnd = -1;
        minor = -1;
        fields = 0;
        int i = from;
        // Leading empty lines (the caller has removed all but a lone trailing CR).
        while (true) {
            if (i == to) return PARTIAL;
            if (in[i] == '\n') {
                i++;
            } else if (in[i] == '\r') {
                if (++i == to) return PARTIAL;
                if (in[i++] != '\n') return BAD;
            } else {
                break;
            }
        }
        // Method.
        methodStart = i;
        if (!isTchar(in[i])) return BAD;
        while (true) {
            if (++i == to) return PARTIAL;
            if (in[i] == ' ') break;
            if (!isTchar(in[i])) return BAD;
        }
        methodEnd = i++;
        // Target.
        int start = i;
        while (i < to && isTargetOctet(in[i] & 0xff)) i++;
        if (i == to) return PARTIAL;
        if (in[i] != ' ' || i == start) return BAD;
        targetStart = start;
        targetEnd = i++;
        // Version.
        if (to - i >= 8) {
            if (!startsWith(in, i, "HTTP/1.")) return VERSION;
            byte last = in[i + 7];
            if (last != '0' && last != '1') return VERSION;
            minor = last - '0';
            i += 8;
        } else {
            String prefix = "HTTP/1.";
            for (int j = 0; i + j < to; j++) {
                if (j == prefix.length() || in[i + j] != prefix.charAt(j)) return VERSION;
            }
            return PARTIAL;
        }
        i = lineEnd(in, i, to);
        if (i < 0) return i == -1 ? PARTIAL : BAD;
        // Field lines.
        int lines = 0;
        while (true) {
            if (i == to) return PARTIAL;
            byte b = in[i];
            if (b == '\r' || b == '\n') {
                i = lineEnd(in, i, to);
                if (i < 0) return i == -1 ? PARTIAL : BAD;
                return COMPLETE;
            }
            if (!isTchar(b)) return BAD;
            int name = i;
            while (++i < to && isTchar(in[i])) { }
            if (i == to) return PARTIAL;
            if (in[i] != ':') return BAD;
            int nameEndAt = i++;
            while (i < to && (in[i] == ' ' || in[i] == '\t')) i++;
            int value = i;
            while (i < to && isValueOctet(in[i] & 0xff)) i++;
            int valueEndAt = i;
            while (valueEndAt > value && (in[valueEndAt - 1] == ' ' || in[valueEndAt - 1] == '\t')) valueEndAt--;
            if (i == to) return PARTIAL;
            i = lineEnd(in, i, to);
            if (i < 0) return i == -1 ? PARTIAL : BAD;
            if (lines == limit) return TOO_MANY;
            if (lines < MAX_FIELDS) {
                nameStart[lines] = name;
                nameEnd[lines] = nameEndAt;
                valueStart[lines] = value;
                valueEnd[lines] = valueEndAt;
                fields = lines + 1;
            }
            lines++;
        }
    }

    /** After a CRLF or LF at {@code i}: its end; -1 when cut short, -2 when not a line end. */
    private static int lineEnd(byte[] in, int i, int to) {
        if (i == to) return -1;
        if (in[i] == '\n') return i + 1;
        if (in[i] != '\r') return -2;
        if (i + 1 == to) return -1;
        return in[i + 1] == '\n' ? i + 2 : -2;
    }

    static boolean startsWith(byte[] in, int at, String ascii) {
        for (int j = 0; j < ascii.length(); j++) {
            if (in[at + j] != ascii.charAt(j)) return false;
        }
        return true;
    }
}
