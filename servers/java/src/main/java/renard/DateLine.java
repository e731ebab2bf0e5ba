package renard;

/**
 * The {@code Date: <IMF-fixdate>\r\n} line (RFC 9110 §5.6.7), re-rendered only when the
 * second changes. One per event loop.
 */
final class DateLine {
    private static final String[] DAYS = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
    private static final String[] MONTHS = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

    /** Seconds since the epoch that {@link #line} shows. */
    private long second = Long.MIN_VALUE;
    private final byte[] line = new byte[6 + 29 + 2];

    DateLine(long epochMillis) {
        update(epochMillis);
    }

    /** Show the time {@code epochMillis} (milliseconds since the epoch). */
    void update(long epochMillis) {
        long s = Math.floorDiv(epochMillis, 1000);
        if (s == second) return;
        second = s;
        long days = Math.floorDiv(s, 86400);
        int secOfDay = (int) Math.floorMod(s, 86400);
        // Civil date from days since 1970-01-01 (proleptic Gregorian).
        long z = days + 719468, era = Math.floorDiv(z, 146097);
        long doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
        int day = (int) (doy - (153 * mp + 2) / 5 + 1), month = (int) (mp < 10 ? mp + 3 : mp - 9);
        long year = yoe + era * 400 + (month <= 2 ? 1 : 0);
        String text = String.format("Date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n",
                DAYS[(int) Math.floorMod(days, 7)], day, MONTHS[month - 1], year,
                secOfDay / 3600, secOfDay / 60 % 60, secOfDay % 60);
        byte[] bytes = Responses.ascii(text);
        System.arraycopy(bytes, 0, line, 0, line.length);
    }

    /** The line, CRLF included (37 octets). */
    byte[] bytes() {
        return line;
    }
}
