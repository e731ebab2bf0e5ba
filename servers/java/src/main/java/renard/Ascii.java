package renard;

/** Comparisons of ASCII text inside byte arrays, without decoding or allocating. */
final class Ascii {
    private Ascii() {}

    /** Whether {@code in[from, from+len)} is exactly {@code text}. */
    static boolean equals(byte[] in, int from, int len, String text) {
        if (len != text.length()) return false;
        for (int i = 0; i < len; i++) {
            if (in[from + i] != text.charAt(i)) return false;
        }
        return true;
    }

    /** Whether {@code in[from, from+len)} is {@code lower} (lower-case ASCII), ignoring case. */
    static boolean equalsIgnoreCase(byte[] in, int from, int len, String lower) {
        if (len != lower.length()) return false;
        for (int i = 0; i < len; i++) {
            int b = in[from + i];
            if (b >= 'A' && b <= 'Z') b += 'a' - 'A';
            if (b != lower.charAt(i)) return false;
        }
        return true;
    }

    /** Whether {@code in[from, to)} starts with {@code lower}, ignoring case. */
    static boolean startsWithIgnoreCase(byte[] in, int from, int to, String lower) {
        return to - from >= lower.length() && equalsIgnoreCase(in, from, lower.length(), lower);
    }

    /** First index in {@code [from, to)} that is not SP or HTAB, or {@code to}. */
    static int trimStart(byte[] in, int from, int to) {
        while (from < to && (in[from] == ' ' || in[from] == '\t')) from++;
        return from;
    }

    /** End of {@code [from, to)} without trailing SP or HTAB. */
    static int trimEnd(byte[] in, int from, int to) {
        while (to > from && (in[to - 1] == ' ' || in[to - 1] == '\t')) to--;
        return to;
    }
}
