// SPEC §4: every response octet by octet.
#include <gtest/gtest.h>

#include <string>

#include "response.hpp"

namespace renard {
namespace {

std::string render(const Answer& a, const Redirects& r)
{
    DateLine date;
    date.update(1795305600);  // Sun, 22 Nov 2026 00:00:00 GMT
    std::string out(r.max_response(), '\0');
    out.resize(write_response(out.data(), a, r, date));
    return out;
}

const Redirects kDefault("https://avatar.example.org/Renard-{n}.png", 21);

TEST(Response, RandomRedirect)
{
    EXPECT_EQ(render({.kind = Answer::Kind::Redirect, .k = 7}, kDefault),
              "HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-7.png\r\nCache-Control: no-store\r\n"
              "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n");
}

TEST(Response, SeededRedirectIsCacheable)
{
    EXPECT_EQ(render({.kind = Answer::Kind::Redirect, .k = 21, .seeded = true, .persistence = Persistence::KeepAlive}, kDefault),
              "HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-21.png\r\n"
              "Cache-Control: public, max-age=86400\r\nDate: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: 0\r\n"
              "Connection: keep-alive\r\n\r\n");
}

TEST(Response, EveryPlaceholderReplacedWhenRenderedPerRequest)
{
    const Redirects many("/{n}/{n}", 1'000'000);
    EXPECT_EQ(render({.kind = Answer::Kind::Redirect, .k = 1'000'000}, many).substr(0, 48),
              "HTTP/1.1 302 Found\r\nLocation: /1000000/1000000\r\n");
}

TEST(Response, HealthHasBodyExceptForHead)
{
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n"
                             "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: 3\r\n\r\n";
    EXPECT_EQ(render({.kind = Answer::Kind::Health}, kDefault), head + "ok\n");
    EXPECT_EQ(render({.kind = Answer::Kind::Health, .head_method = true}, kDefault), head);
}

TEST(Response, MethodNotAllowedHasAllow)
{
    EXPECT_EQ(render({.kind = Answer::Kind::MethodNotAllowed}, kDefault),
              "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nDate: Sun, 22 Nov 2026 00:00:00 GMT\r\n"
              "Content-Length: 0\r\n\r\n");
}

TEST(Response, RefusalsCloseWithTheirStatus)
{
    const std::pair<Reject, const char*> lines[] = {
        {Reject::BadRequest, "400 Bad Request"},     {Reject::Timeout, "408 Request Timeout"},
        {Reject::UriTooLong, "414 URI Too Long"},    {Reject::FieldsTooLarge, "431 Request Header Fields Too Large"},
        {Reject::NotImplemented, "501 Not Implemented"}, {Reject::Version, "505 HTTP Version Not Supported"},
    };
    for (auto [reject, line] : lines)
        EXPECT_EQ(render({.kind = Answer::Kind::Refused, .reject = reject, .persistence = Persistence::Close}, kDefault),
                  std::string("HTTP/1.1 ") + line + "\r\nDate: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: 0\r\n"
                                                   "Connection: close\r\n\r\n");
}

TEST(Response, LongestTemplateFitsMaxResponse)
{
    const Redirects longest(std::string(2046, 'x') + "{n}", 1'000'000);
    const std::string out = render({.kind = Answer::Kind::Redirect, .k = 999'999, .persistence = Persistence::KeepAlive}, longest);
    EXPECT_LE(out.size(), longest.max_response());
}

TEST(DateLine, ImfFixdate)
{
    DateLine d;
    d.update(951782400);  // 2000-02-29 00:00:00 UTC, a Tuesday
    EXPECT_EQ(d.view(), "Date: Tue, 29 Feb 2000 00:00:00 GMT\r\n");
}

}  // namespace
}  // namespace renard
