#include "response.hpp"

#include <cstring>

namespace renard {
namespace {

// Most k whose head is rendered ahead, and most octets spent on them.
constexpr std::uint32_t kPrerenderMaxCount = 256;
constexpr std::size_t kPrerenderMaxBytes = 64 * 1024;

constexpr std::string_view kRedirectStart = "HTTP/1.1 302 Found\r\nLocation: ";

// Appends s at p.
inline void put(char*& p, std::string_view s)
{
    std::memcpy(p, s.data(), s.size());
    p += s.size();
}

// Decimal k (no sign, no leading zeros) at p.
void put_decimal(char*& p, std::uint32_t k)
{
    char digits[10];
    std::size_t n = 0;
    do digits[n++] = char('0' + k % 10), k /= 10;
    while (k > 0);
    while (n > 0) *p++ = digits[--n];
}

std::string_view status_line(Reject r)
{
    switch (r) {
    case Reject::BadRequest: return "HTTP/1.1 400 Bad Request\r\n";
    case Reject::Timeout: return "HTTP/1.1 408 Request Timeout\r\n";
    case Reject::UriTooLong: return "HTTP/1.1 414 URI Too Long\r\n";
    case Reject::FieldsTooLarge: return "HTTP/1.1 431 Request Header Fields Too Large\r\n";
    case Reject::NotImplemented: return "HTTP/1.1 501 Not Implemented\r\n";
    case Reject::Version: return "HTTP/1.1 505 HTTP Version Not Supported\r\n";
    }
    return "HTTP/1.1 400 Bad Request\r\n";
}

}  // namespace

void DateLine::update(std::time_t now)
{
    static constexpr char kDays[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (now == second_) return;
    second_ = now;
    std::tm tm{};
    gmtime_r(&now, &tm);
    char* p = line_;
    const auto two = [&p](int v) { *p++ = char('0' + v / 10 % 10), *p++ = char('0' + v % 10); };
    put(p, "Date: ");
    put(p, {kDays[tm.tm_wday], 3});
    put(p, ", ");
    two(tm.tm_mday);
    *p++ = ' ';
    put(p, {kMonths[tm.tm_mon], 3});
    *p++ = ' ';
    const int year = tm.tm_year + 1900;
    two(year / 100);
    two(year % 100);
    *p++ = ' ';
    two(tm.tm_hour);
    *p++ = ':';
    two(tm.tm_min);
    *p++ = ':';
    two(tm.tm_sec);
    put(p, " GMT\r\n");
}

Redirects::Redirects(std::string_view location_template, std::uint32_t count)
    : template_(location_template), count_(count)
{
    std::size_t placeholders = 0;
    for (auto at = template_.find("{n}"); at != std::string::npos; at = template_.find("{n}", at + 3)) placeholders++;
    // Seven digits for k <= 1 000 000 in place of each 3-octet {n}; 192 covers every other
    // line of any response.
    max_response_ = kRedirectStart.size() + template_.size() + 4 * placeholders + 2 + 192;
    const std::size_t per_k = kRedirectStart.size() + template_.size() + 4 * placeholders + 2;
    if (count > kPrerenderMaxCount || per_k * count > kPrerenderMaxBytes) return;
    prerendered_.resize(per_k * count);
    ends_.resize(count);
    std::size_t at = 0;
    for (std::uint32_t k = 1; k <= count; k++) {
        at += render(prerendered_.data() + at, k);
        ends_[k - 1] = std::uint32_t(at);
    }
    prerendered_.resize(at);
}

std::size_t Redirects::render(char* out, std::uint32_t k) const
{
    char* p = out;
    put(p, kRedirectStart);
    std::string_view rest = template_;
    for (auto at = rest.find("{n}"); at != std::string_view::npos; at = rest.find("{n}")) {
        put(p, rest.substr(0, at));
        put_decimal(p, k);
        rest.remove_prefix(at + 3);
    }
    put(p, rest);
    put(p, "\r\n");
    return std::size_t(p - out);
}

std::size_t Redirects::write_head(char* out, std::uint32_t k) const
{
    if (prerendered_.empty()) return render(out, k);
    const std::uint32_t start = k == 1 ? 0 : ends_[k - 2];
    std::memcpy(out, prerendered_.data() + start, ends_[k - 1] - start);
    return ends_[k - 1] - start;
}

std::size_t write_response(char* out, const Answer& a, const Redirects& redirects, const DateLine& date)
{
    char* p = out;
    bool body = false;
    switch (a.kind) {
    case Answer::Kind::Redirect:
        p += redirects.write_head(p, a.k);
        put(p, a.seeded ? "Cache-Control: public, max-age=86400\r\n" : "Cache-Control: no-store\r\n");
        break;
    case Answer::Kind::Health:
        put(p, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n");
        body = true;
        break;
    case Answer::Kind::NotFound: put(p, "HTTP/1.1 404 Not Found\r\n"); break;
    case Answer::Kind::MethodNotAllowed: put(p, "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n"); break;
    case Answer::Kind::Refused: put(p, status_line(a.reject)); break;
    }
    put(p, date.view());
    put(p, body ? "Content-Length: 3\r\n" : "Content-Length: 0\r\n");
    if (a.persistence == Persistence::KeepAlive) put(p, "Connection: keep-alive\r\n");
    if (a.persistence == Persistence::Close) put(p, "Connection: close\r\n");
    put(p, "\r\n");
    if (body && !a.head_method) put(p, "ok\n");
    return std::size_t(p - out);
}

}  // namespace renard
