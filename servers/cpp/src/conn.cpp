#include "conn.hpp"

#include <algorithm>

namespace renard {

std::int64_t deadline(const Conn& c, std::int64_t header_ns, std::int64_t idle_ns, bool& request_timeout)
{
    const std::int64_t idle = c.last_progress + idle_ns;
    request_timeout = false;
    if (c.phase == Phase::Lingering) return c.linger_until;
    if (c.out_len > 0) return idle;  // the header deadline does not run on unread input
    if (c.head_started < 0) return idle;
    const std::int64_t head = c.head_started + header_ns;
    if (!c.leftover.empty()) {
        request_timeout = true;
        return head;
    }
    return std::min(head, idle);
}

bool eviction_rank(const Conn& c, int& klass, std::int64_t& since)
{
    if (c.closed) return false;
    switch (c.phase) {
    case Phase::Lingering: klass = 0, since = c.linger_until; return true;
    case Phase::Closing: return false;
    case Phase::Open: break;
    }
    if (c.out_len > 0 || c.body_left > 0 || c.peer_done || c.paused) return false;
    if (!c.leftover.empty()) {
        klass = 1, since = c.head_started >= 0 ? c.head_started : c.last_progress;
    } else {
        klass = 2, since = c.last_progress;
    }
    return true;
}

}  // namespace renard
