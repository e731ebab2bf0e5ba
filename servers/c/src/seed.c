#include "seed.h"

#include <string.h>

uint64_t fnv1a(const uint8_t *b, size_t n)
{
    uint64_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * FNV_PRIME;
    return h;
}

static int hex(uint8_t b)
{
    if (b >= '0' && b <= '9') return b - '0';
    if (b >= 'a' && b <= 'f') return b - 'a' + 10;
    if (b >= 'A' && b <= 'F') return b - 'A' + 10;
    return -1;
}

/* Decode the form-urlencoded octet at s[*i] (of n), advancing *i: `+` is 0x20, `%XY` that
 * octet, any other `%` stays literal. */
static uint8_t decode_next(const uint8_t *s, size_t n, size_t *i)
{
    uint8_t b = s[*i];
    if (b == '+') {
        *i += 1;
        return ' ';
    }
    if (b == '%') {
        int hi = *i + 1 < n ? hex(s[*i + 1]) : -1;
        int lo = *i + 2 < n ? hex(s[*i + 2]) : -1;
        if (hi >= 0 && lo >= 0) {
            *i += 3;
            return (uint8_t)(hi << 4 | lo);
        }
    }
    *i += 1;
    return b;
}

/* Whether form-urlencoded s[0..n) decodes to exactly the NUL-terminated word. */
static bool decodes_to(const uint8_t *s, size_t n, const char *word)
{
    size_t i = 0, w = 0;
    while (i < n) {
        if (word[w] == '\0' || decode_next(s, n, &i) != (uint8_t)word[w]) return false;
        w++;
    }
    return word[w] == '\0';
}

bool seed_hash(const uint8_t *t, size_t n, uint64_t *hash)
{
    const uint8_t *q = memchr(t, '?', n);
    if (!q) return false;
    size_t at = (size_t)(q - t) + 1;
    for (;;) {
        const uint8_t *amp = memchr(t + at, '&', n - at);
        size_t end = amp ? (size_t)(amp - t) : n;
        const uint8_t *eq = memchr(t + at, '=', end - at);
        size_t name_end = eq ? (size_t)(eq - t) : end;
        if (decodes_to(t + at, name_end - at, "seed")) {
            size_t value = eq ? name_end + 1 : end, i = 0, len = end - value;
            uint64_t h = FNV_OFFSET;
            while (i < len) h = (h ^ decode_next(t + value, len, &i)) * FNV_PRIME;
            *hash = h;
            return true;
        }
        if (!amp) return false;
        at = end + 1;
    }
}
