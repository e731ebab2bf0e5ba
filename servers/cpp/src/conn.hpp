// One connection's state (SPEC §6, §7) and the rules that read only that state: when it
// expires and how readily it may be evicted. The I/O is the worker's (server.cpp).
//
// Memory contract: an idle connection holds no buffer. `leftover` holds only a partial
// head (or input set aside while the output bound is reached); `out` is taken from the
// worker's pool only while responses are unsent.
#pragma once

#include <cstdint>
#include <vector>

#include "request.hpp"

namespace renard {

// Most unsent response octets held per connection (SPEC §7.5).
inline constexpr std::uint32_t kOutputBound = 64 * 1024;
// Lingering close: longest wait (ns), most octets discarded (SPEC §7.4).
inline constexpr std::int64_t kLingerNs = 2'000'000'000;
inline constexpr std::uint32_t kLingerBytes = 64 * 1024;

enum class Phase : std::uint8_t {
    Open,       // reading requests
    Closing,    // a closing response is queued; nothing more is read as requests
    Lingering,  // write side shut; discarding input until linger_until or kLingerBytes
};

struct Conn {
    int fd = -1;
    Phase phase = Phase::Open;
    bool linger = false;     // Closing: the client may still send, so stage the close (§7.4)
    bool peer_done = false;  // the peer shut its write side
    bool paused = false;     // stopped by the output bound; leftover holds whole requests
    bool recv_armed = false;       // a multishot receive is in flight
    bool recv_cancelled = false;   // ... and its cancellation was asked for
    bool send_inflight = false;    // out[0, send_len) is with the kernel
    bool closed = false;     // descriptor closed; the slot waits for its last completions
    bool vacant = false;     // the slot is free
    std::uint32_t out_len = 0, send_len = 0, discarded = 0;
    char* out = nullptr;     // kOutputBound + max_response octets from the pool, or null
    std::vector<std::uint8_t> leftover;  // partial head, or input held while paused
    std::uint64_t body_left = 0;         // body octets still to discard (SPEC §6)
    Parser parser;                       // the parse of the head in leftover
    std::int64_t head_started = 0;   // ns; start of the header deadline, -1: no head due
    std::int64_t last_progress = 0;  // ns; last octets received or taken by the socket
    std::int64_t linger_until = 0;   // ns; Lingering
};

// When c expires (ns), and whether it then gets a 408 first (SPEC §7.5).
std::int64_t deadline(const Conn& c, std::int64_t header_ns, std::int64_t idle_ns, bool& request_timeout);

// Eviction order at the cap (SPEC §7.5, §7.5.1): false when c must not be chosen (a
// request not answered, output not written, a body being discarded); else its class (0
// lingering, 1 partial head, 2 nothing received) and since, smallest first.
bool eviction_rank(const Conn& c, int& klass, std::int64_t& since);

}  // namespace renard
