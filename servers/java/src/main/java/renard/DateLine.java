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
        StringBuilder text = new StringBuilder(line.length).append("Date: ")
                .append(DAYS[(int) Math.floorMod(days, 7)]).append(", ");
        two(text, day).append(' ').append(MONTHS[month - 1]).append(' ').append(year).append(' ');
        two(two(two(text, secOfDay / 3600).append(':'), secOfDay / 60 % 60).append(':'), secOfDay % 60).append(" GMT\r\n");
        for (int i = 0; i < line.length; i++) line[i] = (byte) text.charAt(i);
    }

    private static StringBuilder two(StringBuilder text, int n) {
        return text.append((char) ('0' + n / 10)).append((char) ('0' + n % 10));
    }

    /** The line, CRLF included (37 octets). */
    byte[] bytes() {
        return line;
    }
}
