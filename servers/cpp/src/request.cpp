// Request heads (SPEC §5) in one pass: each octet is looked at once through a 256-entry
// class table, and the Parser keeps the position and everything learned so far, so a head
// dripped octet by octet costs O(n) in total. Rules 1-6 are checked at the octet that
// decides them; rules 7-9 need the whole head and run at its empty line, from facts
// gathered on the way. The flagship's parser is the same machine: both answer every input,
// however it is split, alike.
#include "request.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "seed.hpp"

namespace renard {
namespace {

using Bytes = std::span<const std::uint8_t>;

// Octet classes (bit flags).
enum Class : std::uint8_t { kTchar = 1, kVchar = 2, kFieldValue = 4, kHost = 8 };

constexpr bool alnum(unsigned c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// TCHAR: RFC 9110 token; VCHAR: 0x21-0x7E, target octets (rule 3); FIELD_VALUE: SP, HTAB,
// VCHAR, obs-text (rule 5); HOST: RFC 3986 unreserved, sub-delims and '%' (rule 7).
constexpr std::array<std::uint8_t, 256> kClasses = [] {
    std::array<std::uint8_t, 256> t{};
    constexpr std::string_view token_extra = "!#$%&'*+-.^_`|~";
    constexpr std::string_view host_extra = "-._~!$&'()*+,;=%";
    for (unsigned c = 0; c < 256; c++) {
        std::uint8_t k = 0;
        if (alnum(c) || token_extra.find(char(c)) != std::string_view::npos) k |= kTchar;
        if (c >= 0x21 && c <= 0x7e) k |= kVchar | kFieldValue;
        if (c == ' ' || c == '\t' || c >= 0x80) k |= kFieldValue;
        if (alnum(c) || host_extra.find(char(c)) != std::string_view::npos) k |= kHost;
        t[c] = k;
    }
    return t;
}();

inline bool is(std::uint8_t b, Class c) { return kClasses[b] & c; }
constexpr bool is_digit(std::uint8_t b) { return b >= '0' && b <= '9'; }
constexpr std::uint8_t lower(std::uint8_t b) { return b >= 'A' && b <= 'Z' ? std::uint8_t(b + 32) : b; }

// s equals the lowercase word w, ignoring ASCII case.
bool equals_word(Bytes s, std::string_view w)
{
    return s.size() == w.size() &&
           std::equal(s.begin(), s.end(), w.begin(), [](std::uint8_t a, char b) { return lower(a) == std::uint8_t(b); });
}

bool equals_exact(Bytes s, std::string_view w)
{
    return s.size() == w.size() && std::equal(s.begin(), s.end(), w.begin(), [](std::uint8_t a, char b) { return a == std::uint8_t(b); });
}

// s without SP or HTAB at either end.
Bytes trim_ows(Bytes s)
{
    auto ows = [](std::uint8_t b) { return b == ' ' || b == '\t'; };
    while (!s.empty() && ows(s.front())) s = s.subspan(1);
    while (!s.empty() && ows(s.back())) s = s.first(s.size() - 1);
    return s;
}

// Calls f on each comma-separated element of v, OWS-trimmed; stops when f returns false.
template <class F>
void for_each_element(Bytes v, F f)
{
    std::size_t start = 0;
    for (std::size_t k = 0; k <= v.size(); k++) {
        if (k < v.size() && v[k] != ',') continue;
        if (!f(trim_ows(v.subspan(start, k - start)))) return;
        start = k + 1;
    }
}

// Rule 7: empty, or host [":" port]; host a reg-name/IPv4 or an IP-literal in brackets,
// port zero or more digits.
bool valid_host(Bytes v)
{
    if (v.empty()) return true;
    std::size_t i = 0;
    if (v[0] == '[') {
        auto close = std::find(v.begin(), v.end(), std::uint8_t(']'));
        if (close == v.end() || close == v.begin() + 1) return false;
        for (i = 1; v.begin() + std::ptrdiff_t(i) < close; i++)
            if (!((is(v[i], kHost) && v[i] != '%') || v[i] == ':')) return false;
        i++;
    } else {
        for (; i < v.size() && v[i] != ':'; i++)
            if (!is(v[i], kHost)) return false;
    }
    if (i == v.size()) return true;
    if (v[i] != ':') return false;
    return std::all_of(v.begin() + std::ptrdiff_t(i) + 1, v.end(), is_digit);
}

// Content-Length: 1 to 18 digits, nothing else (rule 8).
bool parse_content_length(Bytes v, std::uint64_t& out)
{
    if (v.empty() || v.size() > 18 || !std::all_of(v.begin(), v.end(), is_digit)) return false;
    out = 0;
    for (auto b : v) out = out * 10 + (b - '0');
    return true;
}

// The path and path-and-query of an origin-form or absolute-form target (SPEC §2); false
// for any other form. An absolute-form target without a path has the path "/".
bool split_target(Bytes target, Bytes& path, Bytes& path_and_query)
{
    Bytes pq = target;
    if (target[0] != '/') {
        std::size_t skip;
        if (target.size() >= 7 && equals_word(target.first(7), "http://"))
            skip = 7;
        else if (target.size() >= 8 && equals_word(target.first(8), "https://"))
            skip = 8;
        else
            return false;
        std::size_t k = skip;
        while (k < target.size() && target[k] != '/' && target[k] != '?' && target[k] != '#') k++;
        if (k == skip) return false;
        pq = target.subspan(k);
    }
    auto q = std::find(pq.begin(), pq.end(), std::uint8_t('?'));
    path = pq.first(std::size_t(q - pq.begin()));
    static constexpr std::uint8_t kSlash[] = {'/'};
    if (path.empty()) path = kSlash;
    path_and_query = pq;
    return true;
}

Parse failed(Reject why)
{
    Parse p;
    p.outcome = Outcome::Error;
    p.reject = why;
    return p;
}

Parse need_more(std::size_t empty_lines)
{
    Parse p;
    p.empty_lines = empty_lines;
    return p;
}

}  // namespace

void Parser::note_field(Bytes in, Bytes value)
{
    Facts& f = facts_;
    auto bump = [](std::uint8_t& n) { n = n == 255 ? n : std::uint8_t(n + 1); };
    switch (field_) {
    case Field::Other: break;
    case Field::Host:
        bump(f.host_lines);
        if (!valid_host(value)) f.bad_host = true;
        break;
    case Field::ContentLength:
        bump(f.content_length_lines);
        f.content_length_valid = parse_content_length(value, f.content_length);
        break;
    case Field::TransferEncoding:
        bump(f.transfer_encoding_lines);
        f.te_start = std::uint32_t(value.data() - in.data());
        f.te_end = std::uint32_t(f.te_start + value.size());
        break;
    case Field::Connection:
        for_each_element(value, [&f](Bytes token) {
            if (equals_word(token, "close")) f.close = true;
            if (equals_word(token, "keep-alive")) f.keep_alive = true;
            return true;
        });
        break;
    case Field::Expect: f.expect_continue = equals_word(value, "100-continue"); break;
    }
}

// Rules 7-9 on a head in[0, head_len) that passed rules 1-6.
Parse Parser::complete(Bytes in, std::size_t head_len) const
{
    Parse r = failed(Reject::BadRequest);
    const Facts& f = facts_;
    if (f.bad_host || f.host_lines > 1 || (!http10_ && f.host_lines == 0)) return r;
    if (f.content_length_lines > 1 || (f.content_length_lines == 1 && !f.content_length_valid)) return r;
    const std::uint64_t content_length = f.content_length_lines == 1 ? f.content_length : 0;
    bool chunked = false;
    if (f.transfer_encoding_lines > 0) {
        if (f.content_length_lines > 0 || http10_ || f.transfer_encoding_lines > 1) return r;
        std::size_t count = 0;
        bool empty = false;
        Bytes last;
        for_each_element(in.subspan(f.te_start, f.te_end - f.te_start), [&](Bytes coding) {
            empty = coding.empty();
            count++;
            last = coding;
            return !empty;
        });
        if (empty || !equals_word(last, "chunked")) return r;
        if (count > 1) return r.reject = Reject::NotImplemented, r;
        chunked = true;
    }
    Bytes method = in.first(method_end_);
    Bytes target = in.subspan(method_end_ + 1, target_end_ - method_end_ - 1);
    Bytes path, path_and_query;
    if (!split_target(target, path, path_and_query)) return r;
    const bool get = equals_exact(method, "GET"), head = equals_exact(method, "HEAD");
    const bool root = equals_exact(path, "/"), health = equals_exact(path, "/healthz");
    Request& req = r.request;
    if (root && (get || head)) {
        req.route = Route::Redirect;
        req.seeded = seed_hash(path_and_query, req.seed_hash);
    } else if (health && (get || head)) {
        req.route = Route::Health;
    } else {
        req.route = root || health ? Route::MethodNotAllowed : Route::NotFound;
    }
    req.head_len = head_len;
    req.head_method = head;
    req.http10 = http10_;
    req.keep_alive = !f.close && (!http10_ || f.keep_alive);
    req.content_length = content_length;
    req.chunked = chunked;
    req.expect_continue = f.expect_continue && !http10_ && content_length > 0;
    r.outcome = Outcome::Complete;
    return r;
}

// Rules 2-6 octet by octet from pos_, then rules 7-9 at the empty line; `in` starts with
// the request line.
Parse Parser::head(Bytes in)
{
    const std::size_t len = in.size();
    std::size_t pos = pos_;
    const auto refuse = failed;
    const auto partial = [&] {
        pos_ = std::uint32_t(pos);
        return need_more(0);
    };
    // The line end at pos: 1 (LF), 2 (CR LF), 0 when the input ends after a CR (wait), or
    // -1 when a CR is followed by anything else (rule 2: 400).
    const auto line_end = [&]() -> int {
        if (in[pos] == '\n') return 1;
        if (pos + 1 == len) return 0;
        return in[pos + 1] == '\n' ? 2 : -1;
    };
    const auto past_request_line = [&] { return pos > kMaxRequestLine; };
    const auto past_field_section = [&] { return pos - fields_start_ > kMaxFieldSection; };
    for (;;) {
        switch (state_) {
        case State::Start:
        case State::Method:
            while (pos < len && is(in[pos], kTchar)) pos++;
            if (past_request_line()) return refuse(Reject::UriTooLong);
            if (pos == len) return partial();
            if (in[pos] != ' ' || pos == 0) return refuse(Reject::BadRequest);
            method_end_ = std::uint32_t(pos++);
            state_ = State::Target;
            break;
        case State::Target:
            while (pos < len && is(in[pos], kVchar)) pos++;
            if (past_request_line()) return refuse(Reject::UriTooLong);
            if (pos == len) return partial();
            if (in[pos] != ' ' || pos == method_end_ + 1) return refuse(Reject::BadRequest);
            target_end_ = std::uint32_t(pos++);
            state_ = State::Version;
            break;
        case State::Version: {
            // Rule 4: HTTP/ DIGIT . DIGIT, octet by octet.
            const std::size_t start = target_end_ + 1;
            for (; pos < len; pos++) {
                const std::size_t i = pos - start;
                const bool fits = i < 5               ? in[pos] == std::uint8_t("HTTP/"[i])
                                  : (i == 5 || i == 7) ? is_digit(in[pos])
                                  : i == 6             ? in[pos] == '.'
                                                       : false;
                if (!fits) break;
            }
            if (past_request_line()) return refuse(Reject::UriTooLong);
            if (pos == len) return partial();
            if (pos - start != 8 || (in[pos] != '\r' && in[pos] != '\n')) return refuse(Reject::BadRequest);
            const int end = line_end();
            if (end == 0) return partial();
            if (end < 0) return refuse(Reject::BadRequest);
            if (in[start + 5] != '1' || (in[start + 7] != '0' && in[start + 7] != '1')) return refuse(Reject::Version);
            http10_ = in[start + 7] == '0';
            pos += std::size_t(end);
            fields_start_ = std::uint32_t(pos);
            state_ = State::LineStart;
            break;
        }
        case State::LineStart:
            if (pos == len) return partial();
            if (in[pos] == '\r' || in[pos] == '\n') {
                const int end = line_end();
                if (end == 0) return partial();
                if (end < 0) return refuse(Reject::BadRequest);
                pos += std::size_t(end);
                if (past_field_section()) return refuse(Reject::FieldsTooLarge);
                return complete(in, pos);
            }
            if (!is(in[pos], kTchar)) return refuse(Reject::BadRequest);  // obs-fold, or not a name
            line_start_ = std::uint32_t(pos);
            state_ = State::Name;
            break;
        case State::Name: {
            while (pos < len && is(in[pos], kTchar)) pos++;
            if (past_field_section()) return refuse(Reject::FieldsTooLarge);
            if (pos == len) return partial();
            if (in[pos] != ':') return refuse(Reject::BadRequest);  // whitespace before the colon too
            const Bytes name = in.subspan(line_start_, pos - line_start_);
            field_ = name.size() == 4 && equals_word(name, "host")                ? Field::Host
                     : name.size() == 6 && equals_word(name, "expect")            ? Field::Expect
                     : name.size() == 10 && equals_word(name, "connection")       ? Field::Connection
                     : name.size() == 14 && equals_word(name, "content-length")   ? Field::ContentLength
                     : name.size() == 17 && equals_word(name, "transfer-encoding") ? Field::TransferEncoding
                                                                                   : Field::Other;
            pos++;
            state_ = State::ValueStart;
            break;
        }
        case State::ValueStart:
            while (pos < len && (in[pos] == ' ' || in[pos] == '\t')) pos++;
            if (past_field_section()) return refuse(Reject::FieldsTooLarge);
            if (pos == len) return partial();
            value_start_ = std::uint32_t(pos);
            state_ = State::Value;
            break;
        case State::Value: {
            while (pos < len && is(in[pos], kFieldValue)) pos++;
            if (past_field_section()) return refuse(Reject::FieldsTooLarge);
            if (pos == len) return partial();
            if (in[pos] != '\r' && in[pos] != '\n') return refuse(Reject::BadRequest);  // a control octet, DEL
            const int end = line_end();
            if (end == 0) return partial();
            if (end < 0) return refuse(Reject::BadRequest);
            if (++field_lines_ > kMaxFieldLines) return refuse(Reject::FieldsTooLarge);
            note_field(in, trim_ows(in.subspan(value_start_, pos - value_start_)));
            pos += std::size_t(end);
            if (past_field_section()) return refuse(Reject::FieldsTooLarge);
            state_ = State::LineStart;
            break;
        }
        }
    }
}

Parse Parser::more(Bytes in)
{
    if (state_ != State::Start) return head(in);
    // Rule 1: empty lines before the request line are dropped as they come.
    std::size_t at = 0;
    for (;;) {
        if (at == in.size()) return need_more(at);
        if (in[at] == '\n') {
            at += 1;
        } else if (in[at] == '\r') {
            if (at + 1 == in.size()) return need_more(at);
            if (in[at + 1] != '\n') return failed(Reject::BadRequest);
            at += 2;
        } else {
            break;
        }
    }
    state_ = State::Method;
    Parse r = head(in.subspan(at));
    if (r.outcome == Outcome::Complete) r.request.head_len += at;
    if (r.outcome == Outcome::Partial) r.empty_lines = at;
    return r;
}

}  // namespace renard
