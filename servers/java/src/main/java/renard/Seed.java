package renard;

/**
 * Seeded choice (SPEC §3, §3.1): FNV-1a-64 over the decoded {@code seed} query value.
 * Names and values are decoded octet by octet as they are compared or hashed (no allocation).
 */
final class Seed {
    private Seed() {}

    /** FNV-1a-64 offset basis and prime. */
    static final long FNV_OFFSET = 0xcbf29ce484222325L, FNV_PRIME = 0x100000001b3L;

    /** FNV-1a-64 of {@code bytes}. */
    static long fnv1a(byte[] bytes) {
        long h = FNV_OFFSET;
        for (byte b : bytes) h = (h ^ (b & 0xff)) * FNV_PRIME;
        return h;
    }

    /** k in 1..n for the seed whose FNV-1a-64 is {@code hash} (unsigned modulo). */
    static int k(long hash, int n) {
        return (int) Long.remainderUnsigned(hash, n) + 1;
    }

    /**
     * Look for the seed in the query {@code in[from, to)} (what follows the first {@code ?}):
     * the decoded value of the first parameter whose decoded name is exactly {@code seed}
     * (form-urlencoded: {@code +} is 0x20, {@code %XY} that octet, any other {@code %} stays).
     * Sets {@code r.seeded} and {@code r.seedHash}.
     */
    static void find(byte[] in, int from, int to, Request r) {
        for (int p = from; p <= to; ) {
            int end = p;
            while (end < to && in[end] != '&') end++;
            int eq = p;
            while (eq < end && in[eq] != '=') eq++;
            if (decodedEqualsSeed(in, p, eq)) {
                r.seeded = true;
                r.seedHash = hashDecoded(in, Math.min(eq + 1, end), end);
                return;
            }
            p = end + 1;
        }
    }

    private static boolean decodedEqualsSeed(byte[] in, int from, int to) {
        final String name = "seed";
        int matched = 0;
        for (int i = from; i < to; ) {
            int octet = decodedAt(in, i, to);
            i += octet >>> 8 == 0 ? 1 : 3;
            if (matched == name.length() || (octet & 0xff) != name.charAt(matched)) return false;
            matched++;
        }
        return matched == name.length();
    }

    private static long hashDecoded(byte[] in, int from, int to) {
        long h = FNV_OFFSET;
        for (int i = from; i < to; ) {
            int octet = decodedAt(in, i, to);
            i += octet >>> 8 == 0 ? 1 : 3;
            h = (h ^ (octet & 0xff)) * FNV_PRIME;
        }
        return h;
    }

    /** The decoded octet at {@code i}, plus 0x100 when it consumed a {@code %XY} escape. */
    private static int decodedAt(byte[] in, int i, int to) {
        byte b = in[i];
        if (b == '+') return ' ';
        if (b == '%' && i + 2 < to) {
            int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
            if (hi >= 0 && lo >= 0) return 0x100 | hi << 4 | lo;
        }
        return b & 0xff;
    }

    private static int hex(byte b) {
        if (b >= '0' && b <= '9') return b - '0';
        if (b >= 'a' && b <= 'f') return b - 'a' + 10;
        if (b >= 'A' && b <= 'F') return b - 'A' + 10;
        return -1;
    }
}
