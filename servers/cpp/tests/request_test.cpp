// SPEC §2 and §5: one named case per parsing rule, each also fed in two reads split at
// every point and required to give the same answer; the request's fields (persistence,
// body length, chunked, Expect, HEAD, seed).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "request.hpp"
#include "seed.hpp"

namespace renard {
namespace {

std::span<const std::uint8_t> bytes(std::string_view s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

// What a whole input answers: "302", "200", "404", "405", "400", "414", "431", "501",
// "505", or "partial".
std::string verdict(const Parse& p)
{
    switch (p.outcome) {
    case Outcome::Partial: return "partial";
    case Outcome::Error:
        switch (p.reject) {
        case Reject::BadRequest: return "400";
        case Reject::Timeout: return "408";
        case Reject::UriTooLong: return "414";
        case Reject::FieldsTooLarge: return "431";
        case Reject::NotImplemented: return "501";
        case Reject::Version: return "505";
        }
        return "?";
    case Outcome::Complete:
        switch (p.request.route) {
        case Route::Redirect: return "302";
        case Route::Health: return "200";
        case Route::NotFound: return "404";
        case Route::MethodNotAllowed: return "405";
        }
    }
    return "?";
}

// Feeds `in` in two reads split at `split`, as the server does: after Partial the parser
// sees the same octets again (minus dropped empty lines) and more after them.
Parse in_two_reads(std::string_view in, std::size_t split)
{
    Parser parser;
    std::string held(in.substr(0, split));
    Parse p = parser.more(bytes(held));
    if (p.outcome != Outcome::Partial) return p;
    held.erase(0, p.empty_lines);
    held += in.substr(split);
    p = parser.more(bytes(held));
    if (p.outcome == Outcome::Complete) p.request.head_len += in.size() - held.size();
    return p;
}

struct Case {
    const char* name;
    std::string input;
    const char* expected;
};

// Rows print as their name in test listings.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string big(std::size_t n, char c) { return std::string(n, c); }

const Case kCases[] = {
    // §2 routing
    {"get_root_redirects", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "302"},
    {"head_root_redirects", "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", "302"},
    {"get_healthz_is_200", "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", "200"},
    {"post_root_is_405", "POST / HTTP/1.1\r\nHost: a\r\n\r\n", "405"},
    {"lowercase_get_is_405", "get / HTTP/1.1\r\nHost: a\r\n\r\n", "405"},
    {"post_healthz_is_405", "DELETE /healthz HTTP/1.1\r\nHost: a\r\n\r\n", "405"},
    {"other_path_is_404", "GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n", "404"},
    {"double_slash_is_404", "GET // HTTP/1.1\r\nHost: a\r\n\r\n", "404"},
    {"encoded_slash_is_404", "GET /%2F HTTP/1.1\r\nHost: a\r\n\r\n", "404"},
    {"query_on_root_redirects", "GET /?r=7 HTTP/1.1\r\nHost: a\r\n\r\n", "302"},
    {"fragment_octet_belongs_to_path", "GET /#x HTTP/1.1\r\nHost: a\r\n\r\n", "404"},
    {"absolute_form_http", "GET http://example.org/ HTTP/1.1\r\nHost: a\r\n\r\n", "302"},
    {"absolute_form_https_any_case", "GET HTTPS://example.org/healthz HTTP/1.1\r\nHost: a\r\n\r\n", "200"},
    {"absolute_form_empty_path_is_root", "GET http://example.org HTTP/1.1\r\nHost: a\r\n\r\n", "302"},
    {"absolute_form_query_without_path", "GET http://example.org?seed=a HTTP/1.1\r\nHost: a\r\n\r\n", "302"},
    {"absolute_form_without_host_is_400", "GET http:/// HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"other_scheme_is_400", "GET ftp://example.org/ HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"asterisk_form_is_400", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"authority_form_is_400", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    // rule 1: leading empty lines
    {"leading_crlf_ignored", "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "302"},
    {"leading_lf_ignored", "\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "302"},
    {"only_empty_lines_is_partial", "\r\n\n\r\n", "partial"},
    // rule 2: line endings
    {"bare_lf_line_ends", "GET / HTTP/1.1\nHost: a\n\n", "302"},
    {"bare_cr_in_request_line_is_400", "GET / HTTP/1.1\rHost: a\r\n\r\n", "400"},
    {"bare_cr_before_request_line_is_400", "\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"bare_cr_in_field_value_is_400", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", "400"},
    {"cr_then_x_at_head_end_is_400", "GET / HTTP/1.1\r\nHost: a\r\n\rX", "400"},
    // rule 3: request line
    {"request_line_8192_served", "GET /" + big(8192 - 14, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", "404"},
    {"request_line_8193_is_414", "GET /" + big(8193 - 14, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", "414"},
    {"request_line_too_long_decided_early", "GET /" + big(9000, 'a'), "414"},
    {"method_not_token_is_400", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"empty_method_is_400", " / HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"double_space_is_400", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"missing_target_is_400", "GET HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"tab_in_target_is_400", "GET /\t HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"non_ascii_target_is_400", "GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", "400"},
    {"nul_in_method_is_400", std::string("GE\0T / HTTP/1.1\r\nHost: a\r\n\r\n", 28), "400"},
    {"trailing_space_after_version_is_400", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", "400"},
    // rule 4: version
    {"http10_served_without_host", "GET / HTTP/1.0\r\n\r\n", "302"},
    {"http20_is_505", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", "505"},
    {"http12_is_505", "GET / HTTP/1.2\r\nHost: a\r\n\r\n", "505"},
    {"h2_preface_is_505", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "505"},
    {"http1_is_400", "GET / HTTP/1\r\nHost: a\r\n\r\n", "400"},
    {"http011_is_400", "GET / HTTP/01.1\r\nHost: a\r\n\r\n", "400"},
    {"lowercase_http_is_400", "GET / http/1.1\r\nHost: a\r\n\r\n", "400"},
    {"huge_version_is_400", "GET / HTTP/4294967295.255\r\nHost: a\r\n\r\n", "400"},
    {"no_version_is_400", "GET /\r\nHost: a\r\n\r\n", "400"},
    // rule 5: field lines
    {"space_before_colon_is_400", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", "400"},
    {"empty_name_is_400", "GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n", "400"},
    {"obs_fold_is_400", "GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", "400"},
    {"nul_in_value_is_400", std::string("GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", 35), "400"},
    {"del_in_value_is_400", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f\r\n\r\n", "400"},
    {"tab_in_value_served", "GET / HTTP/1.1\r\nHost: a\r\nX: a\tb\r\n\r\n", "302"},
    {"obs_text_in_value_served", "GET / HTTP/1.1\r\nHost: a\r\nX: caf\xc3\xa9\r\n\r\n", "302"},
    {"line_without_colon_is_400", "GET / HTTP/1.1\r\nHost: a\r\nnocolon\r\n\r\n", "400"},
    // rule 6: size
    {"field_section_16384_served", "GET / HTTP/1.1\r\nHost: a\r\nX: " + big(16384 - 9 - 5 - 2, 'v') + "\r\n\r\n", "302"},
    {"field_section_16385_is_431", "GET / HTTP/1.1\r\nHost: a\r\nX: " + big(16384 - 9 - 5 - 1, 'v') + "\r\n\r\n", "431"},
    {"field_section_too_long_decided_early", "GET / HTTP/1.1\r\nX: " + big(17000, 'v'), "431"},
    {"hundred_field_lines_served", [] {
         std::string s = "GET / HTTP/1.1\r\nHost: a\r\n";
         for (int i = 0; i < 99; i++) s += "X: y\r\n";
         return s + "\r\n";
     }(), "302"},
    {"hundred_and_one_field_lines_is_431", [] {
         std::string s = "GET / HTTP/1.1\r\nHost: a\r\n";
         for (int i = 0; i < 100; i++) s += "X: y\r\n";
         return s + "\r\n";
     }(), "431"},
    // rule 7: Host
    {"missing_host_on_11_is_400", "GET / HTTP/1.1\r\n\r\n", "400"},
    {"two_hosts_is_400", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", "400"},
    {"two_hosts_on_10_is_400", "GET / HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n", "400"},
    {"empty_host_served", "GET / HTTP/1.1\r\nHost:\r\n\r\n", "302"},
    {"host_with_port_served", "GET / HTTP/1.1\r\nHOST: example.org:8080\r\n\r\n", "302"},
    {"host_ipv6_literal_served", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", "302"},
    {"host_empty_port_served", "GET / HTTP/1.1\r\nHost: a:\r\n\r\n", "302"},
    {"host_with_slash_is_400", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", "400"},
    {"host_port_letters_is_400", "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n", "400"},
    {"host_userinfo_is_400", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", "400"},
    {"host_empty_brackets_is_400", "GET / HTTP/1.1\r\nHost: []\r\n\r\n", "400"},
    {"host_unclosed_bracket_is_400", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", "400"},
    // rule 8: framing
    {"content_length_served", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", "302"},
    {"content_length_18_digits_served", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 000000000000000000\r\n\r\n", "302"},
    {"content_length_19_digits_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000000000000000\r\n\r\n", "400"},
    {"content_length_sign_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", "400"},
    {"content_length_empty_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", "400"},
    {"content_length_list_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", "400"},
    {"two_content_lengths_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", "400"},
    {"te_and_cl_is_400", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "400"},
    {"te_on_10_is_400", "GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "400"},
    {"two_te_lines_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "400"},
    {"te_not_ending_chunked_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", "400"},
    {"te_empty_element_is_400", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked\r\n\r\n", "400"},
    {"te_gzip_chunked_is_501", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "501"},
    {"te_chunked_any_case_served", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ChUnKeD\r\n\r\n", "302"},
    // order: the first failing check decides
    {"version_before_host", "GET / HTTP/2.0\r\n\r\n", "505"},
    {"size_before_host", "GET / HTTP/1.1\r\nX: " + big(17000, 'v') + "\r\nHost: a\r\nHost: b\r\n\r\n", "431"},
    {"host_before_route", "POST /nowhere HTTP/1.1\r\n\r\n", "400"},
    // need more
    {"half_request_line_is_partial", "GET / HT", "partial"},
    {"head_without_empty_line_is_partial", "GET / HTTP/1.1\r\nHost: a\r\n", "partial"},
    {"cr_at_the_end_is_partial", "GET / HTTP/1.1\r\nHost: a\r\n\r", "partial"},
};

class ParsingRule : public testing::TestWithParam<Case> {};

TEST_P(ParsingRule, AnswersAsTheSpecSays)
{
    const Case& c = GetParam();
    EXPECT_EQ(verdict(Parser::once(bytes(c.input))), c.expected);
}

TEST_P(ParsingRule, AnswersAlikeInTwoReadsSplitAnywhere)
{
    const Case& c = GetParam();
    const std::string whole = verdict(Parser::once(bytes(c.input)));
    const std::size_t step = c.input.size() > 2000 ? 97 : 1;
    for (std::size_t split = 0; split <= c.input.size(); split += step)
        ASSERT_EQ(verdict(in_two_reads(c.input, split)), whole) << "split at " << split;
}

INSTANTIATE_TEST_SUITE_P(Spec, ParsingRule, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& row) { return std::string(row.param.name); });

Request complete(std::string_view in)
{
    const Parse p = Parser::once(bytes(in));
    EXPECT_EQ(p.outcome, Outcome::Complete) << in;
    return p.request;
}

TEST(RequestFields, Http11PersistsUnlessClose)
{
    EXPECT_TRUE(complete("GET / HTTP/1.1\r\nHost: a\r\n\r\n").keep_alive);
    EXPECT_FALSE(complete("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, Close\r\n\r\n").keep_alive);
}

TEST(RequestFields, Http10ClosesUnlessKeepAlive)
{
    EXPECT_FALSE(complete("GET / HTTP/1.0\r\n\r\n").keep_alive);
    const Request r = complete("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
    EXPECT_TRUE(r.keep_alive);
    EXPECT_TRUE(r.http10);
}

TEST(RequestFields, BodyLengthChunkedAndExpect)
{
    EXPECT_EQ(complete("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 42\r\n\r\n").content_length, 42u);
    EXPECT_TRUE(complete("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n").chunked);
    EXPECT_TRUE(complete("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").expect_continue);
    EXPECT_FALSE(complete("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n").expect_continue);
    EXPECT_FALSE(complete("GET / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").expect_continue);
}

TEST(RequestFields, HeadLengthCountsLeadingEmptyLines)
{
    const std::string_view in = "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nGET";
    EXPECT_EQ(complete(in).head_len, in.size() - 3);
    EXPECT_TRUE(complete("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n").head_method);
}

TEST(RequestFields, SeedIsTheFirstSeedParameter)
{
    const Request r = complete("GET /?x=1&seed=renard&seed=other HTTP/1.1\r\nHost: a\r\n\r\n");
    EXPECT_TRUE(r.seeded);
    EXPECT_EQ(r.seed_hash, fnv1a(bytes("renard")));
    EXPECT_FALSE(complete("GET /?r=7 HTTP/1.1\r\nHost: a\r\n\r\n").seeded);
}

}  // namespace
}  // namespace renard
