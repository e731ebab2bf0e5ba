// Response octets (SPEC §4). What does not change is rendered once: the 302 status and
// Location lines per k when N is small (else from template pieces), the fixed lines of
// every other status, and the Date line once per second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "request.hpp"

namespace renard {

// The Connection field a response carries (SPEC §4, §7).
enum class Persistence : std::uint8_t {
    KeepOpen,   // HTTP/1.1 kept open: no field
    KeepAlive,  // HTTP/1.0 kept open: Connection: keep-alive
    Close,      // the server closes after it: Connection: close
};

// "Date: <IMF-fixdate>\r\n", re-rendered when the second changes.
class DateLine {
public:
    static constexpr std::size_t kLength = 37;
    void update(std::time_t now);
    std::string_view view() const { return {line_, kLength}; }

private:
    std::time_t second_ = -1;
    char line_[kLength] = {};
};

// The 302 heads ("HTTP/1.1 302 Found\r\nLocation: ...\r\n") for k = 1..count.
class Redirects {
public:
    Redirects(std::string_view location_template, std::uint32_t count);
    // The longest response any status can produce, in octets.
    std::size_t max_response() const { return max_response_; }
    // Writes the head for k into out (room for max_response is the caller's); its length.
    std::size_t write_head(char* out, std::uint32_t k) const;
    std::uint32_t count() const { return count_; }

private:
    std::size_t render(char* out, std::uint32_t k) const;
    std::string template_;
    std::uint32_t count_;
    std::string prerendered_;          // every head, concatenated; empty when rendered per request
    std::vector<std::uint32_t> ends_;  // ends_[k-1]: where k's head ends in prerendered_
    std::size_t max_response_;
};

// What one response says.
struct Answer {
    enum class Kind : std::uint8_t { Redirect, Health, NotFound, MethodNotAllowed, Refused } kind;
    std::uint32_t k = 0;             // Redirect
    bool seeded = false;             // Redirect
    Reject reject = Reject::BadRequest;  // Refused
    bool head_method = false;
    Persistence persistence = Persistence::KeepOpen;
};

// Writes the whole response at out (room for redirects.max_response() is the caller's);
// returns the octets written.
std::size_t write_response(char* out, const Answer& a, const Redirects& redirects, const DateLine& date);

}  // namespace renard
