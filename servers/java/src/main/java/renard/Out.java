package renard;

/** A growable run of octets: the responses of one read batch, or a connection's unsent rest. */
final class Out {
    byte[] buf;
    /** Octets in use, from index 0. */
    int len;

    Out(int capacity) {
        buf = new byte[capacity];
    }

    void append(byte[] bytes) {
        append(bytes, 0, bytes.length);
    }

    void append(byte[] bytes, int from, int count) {
        if (len + count > buf.length) buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + count));
        System.arraycopy(bytes, from, buf, len, count);
        len += count;
    }

    /** Append {@code n} (>= 0) in decimal, without sign or leading zeros. */
    void appendDecimal(int n) {
        int digits = 1;
        for (int v = n; v >= 10; v /= 10) digits++;
        if (len + digits > buf.length) buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + digits));
        for (int i = len + digits - 1; i >= len; i--) {
            buf[i] = (byte) ('0' + n % 10);
            n /= 10;
        }
        len += digits;
    }
}
