// Request heads (SPEC §2, §5, §6, §7.1): one pass over the octets, resumable across
// reads, with three outcomes (complete, need more, error) decided in Parser::more.
// Never allocates; the caller owns the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace renard {

// Longest request line served, octets without its line end (SPEC §5 rule 3).
inline constexpr std::size_t kMaxRequestLine = 8192;
// Longest field section, from after the request line to the empty line included (rule 6).
inline constexpr std::size_t kMaxFieldSection = 16384;
// Most field lines in one head (rule 6).
inline constexpr std::uint32_t kMaxFieldLines = 100;

// Why a request is refused; each one ends the connection (SPEC §7.2).
enum class Reject : std::uint8_t {
    BadRequest,      // 400: malformed head, bad Host or framing
    Timeout,         // 408: header deadline passed mid-head (decided by the connection)
    UriTooLong,      // 414: request line longer than kMaxRequestLine
    FieldsTooLarge,  // 431: field section too long or too many lines
    NotImplemented,  // 501: a transfer coding other than a lone chunked
    Version,         // 505: HTTP/DIGIT.DIGIT other than 1.0 and 1.1
};

// What the route of a well-formed request answers (SPEC §2).
enum class Route : std::uint8_t { Redirect, Health, NotFound, MethodNotAllowed };

// A complete, valid request head.
struct Request {
    std::size_t head_len = 0;  // octets of the head, leading empty lines included
    Route route = Route::NotFound;
    bool seeded = false;          // Redirect: the query has a seed ...
    std::uint64_t seed_hash = 0;  // ... whose FNV-1a-64 is this
    bool head_method = false;     // HEAD: no body in the answer
    bool http10 = false;          // HTTP/1.0 (else HTTP/1.1)
    bool keep_alive = false;      // persists by the request's own terms (SPEC §7.1)
    std::uint64_t content_length = 0;  // body octets to discard (SPEC §6)
    bool chunked = false;              // Transfer-Encoding: chunked: answer, then close
    bool expect_continue = false;      // HTTP/1.1 Expect: 100-continue with a body
};

enum class Outcome : std::uint8_t { Complete, Partial, Error };

struct Parse {
    Outcome outcome = Outcome::Partial;
    Request request;              // Complete
    std::size_t empty_lines = 0;  // Partial: leading empty-line octets the caller may drop
    Reject reject = Reject::BadRequest;  // Error
};

// Where the pass over one head stands. A default-constructed Parser starts a new head.
class Parser {
public:
    // Go on with the head at the start of `in` from where the last call stopped (SPEC §5:
    // each check of rules 1-6 at the octet that decides it; rules 7-9 at the empty line).
    // After Partial the caller drops `empty_lines` octets and calls again with the same
    // octets and more after them; after Complete or Error it resets the parser.
    Parse more(std::span<const std::uint8_t> in);

    // A whole head from scratch (tests, fuzzing).
    static Parse once(std::span<const std::uint8_t> in) { return Parser{}.more(in); }

    void reset() { *this = Parser{}; }
    bool started() const { return state_ != State::Start; }

private:
    enum class State : std::uint8_t { Start, Method, Target, Version, LineStart, Name, ValueStart, Value };
    enum class Field : std::uint8_t { Other, Host, ContentLength, TransferEncoding, Connection, Expect };

    // What rules 7, 8 and §7.1 read, gathered as the field lines pass.
    struct Facts {
        std::uint8_t host_lines = 0, content_length_lines = 0, transfer_encoding_lines = 0;  // saturating
        bool bad_host = false;
        bool content_length_valid = false;  // the last Content-Length is 1 to 18 digits ...
        std::uint64_t content_length = 0;   // ... with this value
        std::uint32_t te_start = 0, te_end = 0;  // the last Transfer-Encoding value, trimmed
        bool close = false, keep_alive = false, expect_continue = false;
    };

    Parse head(std::span<const std::uint8_t> in);
    Parse complete(std::span<const std::uint8_t> in, std::size_t head_len) const;
    void note_field(std::span<const std::uint8_t> in, std::span<const std::uint8_t> value);

    std::uint32_t pos_ = 0;  // next octet to look at, from the request line's first octet
    State state_ = State::Start;
    Field field_ = Field::Other;
    bool http10_ = false;
    std::uint32_t line_start_ = 0, value_start_ = 0;
    std::uint32_t method_end_ = 0, target_end_ = 0;  // the SP after the method, the target
    std::uint32_t fields_start_ = 0, field_lines_ = 0;
    Facts facts_;
};

}  // namespace renard
