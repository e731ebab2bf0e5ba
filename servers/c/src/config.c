#include "config.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char USAGE[] =
    "usage: renard [--flag VALUE | --flag=VALUE]...\n"
    "\n"
    "Answers GET / with a 302 redirect to TEMPLATE with {n} replaced by k in 1..N\n"
    "(uniform, or FNV-1a-64 of ?seed=S mod N + 1).\n"
    "\n"
    "  --listen HOST:PORT       RENARD_LISTEN           default 127.0.0.1:8080 (IPv6: [ADDR]:PORT)\n"
    "  --count N                RENARD_COUNT            default 21 (1 to 1000000)\n"
    "  --location TEMPLATE      RENARD_LOCATION         default https://avatar.example.org/Renard-{n}.png\n"
    "  --threads N              RENARD_THREADS          default: CPUs available (1 to 1024)\n"
    "  --header-timeout S       RENARD_HEADER_TIMEOUT   default 10 (seconds, > 0, <= 86400)\n"
    "  --idle-timeout S         RENARD_IDLE_TIMEOUT     default 60 (seconds, > 0, <= 86400)\n"
    "  --max-connections N      RENARD_MAX_CONNECTIONS  default 10000 (1 to 1000000)\n"
    "  --drain-timeout S        RENARD_DRAIN_TIMEOUT    default 1 (seconds, >= 0, <= 86400)\n"
    "  --help                   print this text\n"
    "  --version                print the version\n";

/* The flags that take a value, with their variables. */
enum flag { LISTEN, COUNT, LOCATION, THREADS, HEADER_TIMEOUT, IDLE_TIMEOUT, MAX_CONNECTIONS, DRAIN_TIMEOUT, FLAGS };
static const char *const FLAG_NAMES[FLAGS][2] = {
    {"--listen", "RENARD_LISTEN"},
    {"--count", "RENARD_COUNT"},
    {"--location", "RENARD_LOCATION"},
    {"--threads", "RENARD_THREADS"},
    {"--header-timeout", "RENARD_HEADER_TIMEOUT"},
    {"--idle-timeout", "RENARD_IDLE_TIMEOUT"},
    {"--max-connections", "RENARD_MAX_CONNECTIONS"},
    {"--drain-timeout", "RENARD_DRAIN_TIMEOUT"},
};

#define SECONDS_MAX 86400

/* s in double quotes, unprintable octets escaped (\n, \t, \xNN), into out. */
static void quoted(const char *s, char *out, size_t size)
{
    size_t n = 0;
    if (size < 3) return;
    out[n++] = '"';
    for (; *s && n + 6 < size; s++) {
        unsigned char b = (unsigned char)*s;
        if (b == '\n') n += (size_t)snprintf(out + n, size - n, "\\n");
        else if (b == '\t') n += (size_t)snprintf(out + n, size - n, "\\t");
        else if (b == '\r') n += (size_t)snprintf(out + n, size - n, "\\r");
        else if (b == '"' || b == '\\') n += (size_t)snprintf(out + n, size - n, "\\%c", b);
        else if (b < 0x20 || b >= 0x7f) n += (size_t)snprintf(out + n, size - n, "\\x%02x", b);
        else out[n++] = (char)b;
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* A decimal integer from 1 to max, digits only. */
static bool parse_integer(const char *v, uint32_t max, uint32_t *out)
{
    size_t len = strlen(v);
    if (len == 0 || len > 9) return false;
    uint32_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return false;
        n = n * 10 + (uint32_t)(v[i] - '0');
    }
    if (n < 1 || n > max) return false;
    *out = n;
    return true;
}

/* DIGITS[.DIGITS] at most 86400 s, in nanoseconds; a positive value below a nanosecond is
 * one nanosecond, so that only an exact zero is zero. */
static bool parse_seconds(const char *v, int64_t *out)
{
    const char *dot = strchr(v, '.');
    size_t whole = dot ? (size_t)(dot - v) : strlen(v);
    if (whole == 0 || whole > 5) return false;
    int64_t secs = 0, nanos = 0;
    bool nonzero_fraction = false;
    for (size_t i = 0; i < whole; i++) {
        if (v[i] < '0' || v[i] > '9') return false;
        secs = secs * 10 + (v[i] - '0');
    }
    if (dot) {
        const char *f = dot + 1;
        if (*f == '\0') return false;
        for (size_t i = 0; f[i]; i++) {
            if (f[i] < '0' || f[i] > '9') return false;
            if (i < 9) nanos = nanos * 10 + (f[i] - '0');
            if (f[i] != '0') nonzero_fraction = true;
        }
        for (size_t i = strlen(f); i < 9; i++) nanos *= 10;
    }
    int64_t total = secs * 1000000000 + nanos;
    if (total > (int64_t)SECONDS_MAX * 1000000000) return false;
    if (total == 0 && nonzero_fraction) total = 1;
    *out = total;
    return true;
}

/* Numeric A.B.C.D:PORT or [IPv6]:PORT, PORT 0-65535. */
static bool parse_listen(const char *v, struct config *c)
{
    const char *colon = strrchr(v, ':');
    if (!colon || colon[1] == '\0' || strlen(colon + 1) > 5) return false;
    unsigned port = 0;
    for (const char *p = colon + 1; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        port = port * 10 + (unsigned)(*p - '0');
    }
    if (port > 65535) return false;
    char host[64];
    size_t host_len = (size_t)(colon - v);
    memset(&c->listen, 0, sizeof c->listen);
    if (v[0] == '[') {
        if (host_len < 3 || v[host_len - 1] != ']' || host_len - 2 >= sizeof host) return false;
        memcpy(host, v + 1, host_len - 2);
        host[host_len - 2] = '\0';
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&c->listen;
        if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) return false;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        c->listen_len = sizeof *a;
    } else {
        if (host_len == 0 || host_len >= sizeof host) return false;
        memcpy(host, v, host_len);
        host[host_len] = '\0';
        struct sockaddr_in *a = (struct sockaddr_in *)&c->listen;
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1) return false;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        c->listen_len = sizeof *a;
    }
    return true;
}

/* Validate one value into c; NULL, or the reason it is refused. */
static const char *apply(enum flag f, const char *v, struct config *c)
{
    switch (f) {
    case LISTEN:
        return parse_listen(v, c) ? NULL : "must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535";
    case COUNT:
        return parse_integer(v, 1000000, &c->count) ? NULL : "must be an integer from 1 to 1000000";
    case LOCATION: {
        size_t len = strlen(v);
        if (len == 0 || len > 2048) return "must be 1 to 2048 octets long";
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e)
                return "must be visible ASCII only (0x21-0x7E: no space, no control octets)";
        if (!strstr(v, "{n}")) return "must contain {n}";
        memcpy(c->location, v, len + 1);
        return NULL;
    }
    case THREADS:
        return parse_integer(v, 1024, &c->threads) ? NULL : "must be an integer from 1 to 1024";
    case HEADER_TIMEOUT:
    case IDLE_TIMEOUT: {
        int64_t *out = f == HEADER_TIMEOUT ? &c->header_timeout_ns : &c->idle_timeout_ns;
        return parse_seconds(v, out) && *out > 0
                   ? NULL
                   : "must be a decimal number of seconds greater than 0 and at most 86400";
    }
    case MAX_CONNECTIONS:
        return parse_integer(v, 1000000, &c->max_connections) ? NULL : "must be an integer from 1 to 1000000";
    case DRAIN_TIMEOUT:
        return parse_seconds(v, &c->drain_timeout_ns) ? NULL : "must be a decimal number of seconds from 0 to 86400";
    case FLAGS:
        break;
    }
    return "unknown";
}

enum command config_parse(int argc, char *const *argv, const char *(*getvar)(const char *),
                          uint32_t cpus, struct config *c, char *error, size_t size)
{
    const char *given[FLAGS] = {0};
    char q[256];
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0) return COMMAND_HELP;
        if (strcmp(arg, "--version") == 0) return COMMAND_VERSION;
        if (strncmp(arg, "--", 2) != 0) {
            quoted(arg, q, sizeof q);
            snprintf(error, size, "renard: %s: unexpected argument (renard takes only flags; see --help)", q);
            return COMMAND_ERROR;
        }
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        int f = 0;
        while (f < FLAGS && !(strlen(FLAG_NAMES[f][0]) == name_len && strncmp(FLAG_NAMES[f][0], arg, name_len) == 0)) f++;
        if (f == FLAGS) {
            /* The name as given, control octets shown as '?': still one line. */
            snprintf(error, size, "renard: %.*s: unknown flag (see --help)", (int)(name_len > 100 ? 100 : name_len), arg);
            for (char *p = error; *p; p++)
                if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f) *p = '?';
            return COMMAND_ERROR;
        }
        if (eq) {
            given[f] = eq + 1;
        } else if (i + 1 < argc) {
            given[f] = argv[++i];
        } else {
            snprintf(error, size, "renard: %s: missing value", FLAG_NAMES[f][0]);
            return COMMAND_ERROR;
        }
    }
    memset(c, 0, sizeof *c);
    static const char *const DEFAULTS[FLAGS] = {"127.0.0.1:8080", "21", "https://avatar.example.org/Renard-{n}.png",
                                                NULL, "10", "60", "10000", "1"};
    c->threads = cpus < 1 ? 1 : cpus > 1024 ? 1024 : cpus;
    for (int f = 0; f < FLAGS; f++) {
        const char *name = FLAG_NAMES[f][0], *value = given[f];
        if (!value) {
            const char *var = getvar(FLAG_NAMES[f][1]);
            if (var && *var) name = FLAG_NAMES[f][1], value = var;
        }
        const char *reason = value ? apply((enum flag)f, value, c) : NULL;
        if (!value && DEFAULTS[f]) reason = apply((enum flag)f, DEFAULTS[f], c);
        if (reason) {
            quoted(value ? value : "", q, sizeof q);
            snprintf(error, size, "renard: %s: %s (got %s)", name, reason, q);
            return COMMAND_ERROR;
        }
    }
    return COMMAND_SERVE;
}

void format_address(const struct sockaddr *a, char *out, size_t size)
{
    char host[INET6_ADDRSTRLEN];
    if (a->sa_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)a;
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        snprintf(out, size, "[%s]:%u", host, ntohs(v6->sin6_port));
    } else {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)a;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        snprintf(out, size, "%s:%u", host, ntohs(v4->sin_port));
    }
}
