#include "config.hpp"

#include <arpa/inet.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

namespace renard {

const char kUsage[] =
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

namespace {

struct Flag {
    std::string_view name, variable;
    const char* fallback;  // nullptr: computed (threads)
};

enum Index { kListen, kCount, kLocation, kThreads, kHeaderTimeout, kIdleTimeout, kMaxConnections, kDrainTimeout, kFlags };

constexpr std::array<Flag, kFlags> kFlagTable = {{
    {"--listen", "RENARD_LISTEN", "127.0.0.1:8080"},
    {"--count", "RENARD_COUNT", "21"},
    {"--location", "RENARD_LOCATION", "https://avatar.example.org/Renard-{n}.png"},
    {"--threads", "RENARD_THREADS", nullptr},
    {"--header-timeout", "RENARD_HEADER_TIMEOUT", "10"},
    {"--idle-timeout", "RENARD_IDLE_TIMEOUT", "60"},
    {"--max-connections", "RENARD_MAX_CONNECTIONS", "10000"},
    {"--drain-timeout", "RENARD_DRAIN_TIMEOUT", "1"},
}};

constexpr std::int64_t kSecondsMax = 86400;
constexpr std::int64_t kNs = 1'000'000'000;

bool digits_only(std::string_view v)
{
    for (char c : v)
        if (c < '0' || c > '9') return false;
    return true;
}

// v in double quotes, unprintable octets escaped (\n, \t, \r, \xNN).
std::string quoted(std::string_view v)
{
    std::string out = "\"";
    for (unsigned char b : v.substr(0, 200)) {
        if (b == '\n') out += "\\n";
        else if (b == '\t') out += "\\t";
        else if (b == '\r') out += "\\r";
        else if (b == '"' || b == '\\') out += '\\', out += char(b);
        else if (b < 0x20 || b >= 0x7f) {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", b);
            out += hex;
        } else out += char(b);
    }
    return out + "\"";
}

// A decimal integer from 1 to max, digits only.
std::optional<std::uint32_t> parse_integer(std::string_view v, std::uint32_t max)
{
    if (v.empty() || v.size() > 9 || !digits_only(v)) return std::nullopt;
    std::uint32_t n = 0;
    for (char c : v) n = n * 10 + std::uint32_t(c - '0');
    if (n < 1 || n > max) return std::nullopt;
    return n;
}

// DIGITS[.DIGITS], at most 86400 s, in nanoseconds; a positive value below a nanosecond is
// one nanosecond, so that only an exact zero is zero.
std::optional<std::int64_t> parse_seconds(std::string_view v)
{
    const auto dot = v.find('.');
    const std::string_view whole = v.substr(0, dot);
    if (whole.empty() || whole.size() > 5 || !digits_only(whole)) return std::nullopt;
    std::int64_t seconds = 0, nanos = 0;
    bool nonzero_fraction = false;
    for (char c : whole) seconds = seconds * 10 + (c - '0');
    if (dot != std::string_view::npos) {
        const std::string_view fraction = v.substr(dot + 1);
        if (fraction.empty() || !digits_only(fraction)) return std::nullopt;
        for (std::size_t i = 0; i < 9; i++) nanos = nanos * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
        nonzero_fraction = fraction.find_first_not_of('0') != std::string_view::npos;
    }
    std::int64_t total = seconds * kNs + nanos;
    if (total > kSecondsMax * kNs) return std::nullopt;
    if (total == 0 && nonzero_fraction) total = 1;
    return total;
}

// Numeric A.B.C.D:PORT or [IPv6]:PORT, PORT 0-65535.
bool parse_listen(std::string_view v, Config& c)
{
    const auto colon = v.rfind(':');
    if (colon == std::string_view::npos) return false;
    const std::string_view port_text = v.substr(colon + 1);
    if (port_text.empty() || port_text.size() > 5 || !digits_only(port_text)) return false;
    unsigned port = 0;
    for (char ch : port_text) port = port * 10 + unsigned(ch - '0');
    if (port > 65535) return false;
    std::string_view host = v.substr(0, colon);
    c.listen = {};
    if (!host.empty() && host.front() == '[') {
        if (host.size() < 3 || host.back() != ']') return false;
        const std::string literal(host.substr(1, host.size() - 2));
        auto* a = reinterpret_cast<sockaddr_in6*>(&c.listen);
        if (inet_pton(AF_INET6, literal.c_str(), &a->sin6_addr) != 1) return false;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(std::uint16_t(port));
        c.listen_len = sizeof *a;
    } else {
        const std::string literal(host);
        auto* a = reinterpret_cast<sockaddr_in*>(&c.listen);
        if (literal.empty() || inet_pton(AF_INET, literal.c_str(), &a->sin_addr) != 1) return false;
        a->sin_family = AF_INET;
        a->sin_port = htons(std::uint16_t(port));
        c.listen_len = sizeof *a;
    }
    return true;
}

// Validates one value into c: nullptr, or the reason it is refused.
const char* apply(Index f, std::string_view v, Config& c)
{
    switch (f) {
    case kListen: return parse_listen(v, c) ? nullptr : "must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535";
    case kCount:
        if (auto n = parse_integer(v, 1'000'000)) return c.count = *n, nullptr;
        return "must be an integer from 1 to 1000000";
    case kLocation:
        if (v.empty() || v.size() > 2048) return "must be 1 to 2048 octets long";
        for (unsigned char b : v)
            if (b < 0x21 || b > 0x7e) return "must be visible ASCII only (0x21-0x7E: no space, no control octets)";
        if (v.find("{n}") == std::string_view::npos) return "must contain {n}";
        c.location = v;
        return nullptr;
    case kThreads:
        if (auto n = parse_integer(v, 1024)) return c.threads = *n, nullptr;
        return "must be an integer from 1 to 1024";
    case kHeaderTimeout:
    case kIdleTimeout: {
        auto s = parse_seconds(v);
        if (!s || *s == 0) return "must be a decimal number of seconds greater than 0 and at most 86400";
        (f == kHeaderTimeout ? c.header_timeout_ns : c.idle_timeout_ns) = *s;
        return nullptr;
    }
    case kMaxConnections:
        if (auto n = parse_integer(v, 1'000'000)) return c.max_connections = *n, nullptr;
        return "must be an integer from 1 to 1000000";
    case kDrainTimeout:
        if (auto s = parse_seconds(v)) return c.drain_timeout_ns = *s, nullptr;
        return "must be a decimal number of seconds from 0 to 86400";
    case kFlags: break;
    }
    return "unknown";
}

}  // namespace

Command parse_config(std::span<char* const> args, const std::function<const char*(const char*)>& getvar,
                     std::uint32_t cpus, Config& config, std::string& error)
{
    std::array<const char*, kFlags> given{};
    for (std::size_t i = 0; i < args.size(); i++) {
        const std::string_view arg = args[i];
        if (arg == "--help") return Command::Help;
        if (arg == "--version") return Command::Version;
        if (!arg.starts_with("--")) {
            error = "renard: " + quoted(arg) + ": unexpected argument (renard takes only flags; see --help)";
            return Command::Error;
        }
        const auto eq = arg.find('=');
        const std::string_view name = arg.substr(0, eq);
        std::size_t f = 0;
        while (f < kFlags && kFlagTable[f].name != name) f++;
        if (f == kFlags) {
            // The name as given, its unprintable octets replaced.
            std::string shown(name.substr(0, 100));
            for (char& ch : shown)
                if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
            error = "renard: " + shown + ": unknown flag (see --help)";
            return Command::Error;
        }
        if (eq != std::string_view::npos) {
            given[f] = args[i] + eq + 1;
        } else if (i + 1 < args.size()) {
            given[f] = args[++i];
        } else {
            error = "renard: " + std::string(kFlagTable[f].name) + ": missing value";
            return Command::Error;
        }
    }
    config = Config{};
    config.threads = cpus < 1 ? 1 : cpus > 1024 ? 1024 : cpus;
    for (std::size_t f = 0; f < kFlags; f++) {
        std::string_view source = kFlagTable[f].name;
        const char* value = given[f];
        if (!value) {
            const std::string variable(kFlagTable[f].variable);
            const char* from_env = getvar(variable.c_str());
            if (from_env && *from_env) source = kFlagTable[f].variable, value = from_env;
        }
        const char* reason = nullptr;
        if (value)
            reason = apply(Index(f), value, config);
        else if (kFlagTable[f].fallback)
            reason = apply(Index(f), kFlagTable[f].fallback, config);
        if (reason) {
            error = "renard: " + std::string(source) + ": " + reason + " (got " + quoted(value ? value : "") + ")";
            return Command::Error;
        }
    }
    return Command::Serve;
}

std::string format_address(const sockaddr* address)
{
    char host[INET6_ADDRSTRLEN] = {};
    char out[INET6_ADDRSTRLEN + 16];
    if (address->sa_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        std::snprintf(out, sizeof out, "[%s]:%u", host, ntohs(v6->sin6_port));
    } else {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        std::snprintf(out, sizeof out, "%s:%u", host, ntohs(v4->sin_port));
    }
    return out;
}

}  // namespace renard
