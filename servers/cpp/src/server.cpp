// One thread's io_uring loop. Every operation is a completion: single-shot accepts on the
// listener, a multishot receive per connection into the thread's provided-buffer ring, at
// most one send per connection in flight (each receive batch's answers go out in one
// send), and a poll on the shutdown eventfd. Timeouts: the wait for completions is bounded
// by the earliest deadline (io_uring_submit_and_wait_timeout), then a sweep applies what
// passed, as the flagship's loop does.
#include "server.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <vector>

#include "conn.hpp"
#include "ring.hpp"
#include "seed.hpp"

namespace renard {
namespace {

constexpr std::int64_t kNs = 1'000'000'000;
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
// After the drain window, responses under way get this long (SPEC §7.6: exit within the
// window plus 1 s).
constexpr std::int64_t kDrainFinishNs = kNs / 2;
// Submission queue entries; the completion queue is four times as large.
constexpr unsigned kRingEntries = 512;
// Provided buffers for receive: count (a power of two) and size. A head larger than one
// buffer arrives in several completions and is assembled in the connection's leftover.
constexpr unsigned kBufferCount = 64;
constexpr std::size_t kBufferSize = 2048;
// Output buffers kept for reuse once their connection has sent everything.
constexpr std::size_t kPoolKeep = 32;
// Accepts in flight per thread: at most kAcceptsPlaced, each holding a place under the cap
// (and at most a quarter of the cap shared among the threads); kAcceptsAtCap while no
// place is left, whose arrivals make room (SPEC §7.5).
constexpr std::uint32_t kAcceptsPlaced = 16;
constexpr std::uint32_t kAcceptsAtCap = 2;
// At the cap, candidates whose sockets are read before one is chosen.
constexpr std::size_t kVictimReads = 8;
// Reads of one socket by read_held, kBufferSize each: more than the longest head (§5).
constexpr unsigned kHeldReads = 16;

// What a completion is for: the operation in the top byte of user_data, the slot below (for
// an accept, whether it holds a place under the cap).
enum class Op : std::uint8_t { Ignore = 0, Accept, Recv, Send, Shutdown };
enum Place : std::uint32_t { kAtCap = 0, kPlaced = 1 };
constexpr std::uint64_t tag(Op op, std::uint32_t slot = 0) { return std::uint64_t(op) << 56 | slot; }
constexpr Op op_of(std::uint64_t data) { return Op(data >> 56); }
constexpr std::uint32_t slot_of(std::uint64_t data) { return std::uint32_t(data); }

std::int64_t monotonic_ns()
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return std::int64_t(t.tv_sec) * kNs + t.tv_nsec;
}

// wyrand: a 64-bit draw; k = draw mod N + 1 has a bias below 2^-44 for N <= 10^6 (SPEC §3).
std::uint64_t draw(std::uint64_t& state)
{
    state += 0xa0761d6478bd642fULL;
    const __uint128_t t = __uint128_t(state) * (state ^ 0xe7037ed1a0b428dbULL);
    return std::uint64_t(t >> 64) ^ std::uint64_t(t);
}

class Worker {
public:
    Worker(Shared& shared, int listen_fd)
        : shared_(shared), config_(shared.config), redirects_(*shared.redirects), listener_(listen_fd),
          buffers_(kBufferCount, kBufferSize, 0), out_capacity_(kOutputBound + redirects_.max_response())
    {
    }
    ~Worker()
    {
        if (listener_) close_listener();  // a loop that failed to start
        for (char* b : pool_) std::free(b);
        for (int fd : closing_fds_) ::close(fd);
        for (auto& c : conns_) {
            if (!c.closed && c.fd >= 0) ::close(c.fd);
            std::free(c.out);
        }
    }

    int setup(std::string& error);
    void run();

private:
    // Loop pieces.
    void dispatch(const io_uring_cqe& cqe);
    void arm_accept();
    void close_pending();
    void on_accept(Place place, const io_uring_cqe& cqe);
    bool take_place();
    void queue_accept(Place place);
    std::uint32_t accepts_in_flight() const { return accepts_[kPlaced] + accepts_[kAtCap]; }
    void expire();
    void begin_shutdown();
    void close_listener();
    void end_drain();
    std::int64_t wake_at() const;

    // Connection pieces.
    std::uint32_t take_slot();
    void free_slot_if_done(std::uint32_t i);
    void close_conn(std::uint32_t i);
    void arm_recv(std::uint32_t i);
    void on_recv(std::uint32_t i, const io_uring_cqe& cqe);
    void on_send(std::uint32_t i, int res);
    void take_input(std::uint32_t i, std::span<const std::uint8_t> in);
    bool read_held(std::uint32_t i);
    bool may_read_armed();
    void serve_leftover(std::uint32_t i);
    std::size_t serve(Conn& c, std::span<const std::uint8_t> in, bool& answered);
    void write_answer(Conn& c, const Answer& a);
    void refuse(Conn& c, Reject why);
    void settle(std::uint32_t i);
    void finish_closing(std::uint32_t i);
    std::uint32_t choose_victim() const;
    bool make_room();
    void admit(int fd, Place place);
    bool output_full(const Conn& c) const { return c.out_len + redirects_.max_response() > kOutputBound; }
    void note_deadline(const Conn& c);

    Shared& shared_;
    const Config& config_;
    const Redirects& redirects_;
    Fd listener_;
    BufferRing buffers_;
    std::size_t out_capacity_;
    std::vector<char*> pool_;
    std::vector<Conn> conns_;
    std::vector<std::uint32_t> free_slots_;
    std::vector<int> closing_fds_;  // closed connections' descriptors, closed after submission
    std::vector<int> at_cap_;  // accepted at the cap in this batch, admitted after it
    std::uint32_t live_ = 0;  // slots in use, closed ones waiting for completions included
    DateLine date_;
    std::uint64_t rng_ = 0;
    std::int64_t now_ = 0;
    std::int64_t next_scan_ = kNever;
    std::uint32_t accepts_[2] = {0, 0};  // accept operations the kernel holds, by Place
    std::uint32_t places_ = 1;           // ... at most, holding a place (kAcceptsPlaced)
    bool shutting_down_ = false;  // every response closes (SPEC §7.6)
    std::int64_t drain_end_ = kNever;
    bool drain_ended_ = false;
    Ring ring_;  // last: torn down first, before the memory its operations point into
};

int Worker::setup(std::string& error)
{
    if (int rc = ring_.init(kRingEntries); rc != 0) {
        error = std::string("renard: io_uring: cannot set up a ring: ") + std::strerror(-rc);
        return -1;
    }
    if (int rc = buffers_.attach(ring_.get()); rc != 0) {
        error = std::string("renard: io_uring: cannot register a provided-buffer ring (Linux 5.19 or later): ") +
                std::strerror(-rc);
        return -1;
    }
    if (getrandom(&rng_, sizeof rng_, 0) != sizeof rng_) {
        error = "renard: getrandom: cannot seed the generator";
        return -1;
    }
    now_ = monotonic_ns();
    date_.update(std::time(nullptr));
    places_ = std::clamp<std::uint32_t>(config_.max_connections / (4 * config_.threads), 1, kAcceptsPlaced);
    io_uring_sqe* s = ring_.sqe();
    io_uring_prep_poll_add(s, shared_.shutdown_fd, POLLIN);
    io_uring_sqe_set_data64(s, tag(Op::Shutdown));
    return 0;
}

// Single-shot accepts, each of which takes one connection (a multishot accept takes all
// the listener holds in one go: 250 to 330 at once in a flood, measured, hundreds of
// descriptors over the cap until the batch was handled). Each accept first takes a place
// under the cap (Shared::open), so that what the threads accept fits; with none left, a
// thread keeps kAcceptsAtCap in flight whose arrivals evict (SPEC §7.5). So the threads
// together hold at most threads x kAcceptsAtCap descriptors over the cap, until the end
// of a batch. A place held by an accept in flight counts as an open connection: with
// several threads, an arrival at one may evict while another holds places not yet used.
void Worker::arm_accept()
{
    if (shutting_down_) return;
    while (accepts_in_flight() < places_ && take_place()) queue_accept(kPlaced);
    while (accepts_in_flight() < kAcceptsAtCap) queue_accept(kAtCap);
}

void Worker::queue_accept(Place place)
{
    io_uring_sqe* s = ring_.sqe();
    io_uring_prep_accept(s, listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(s, tag(Op::Accept, place));
    accepts_[place]++;
}

// One place under the cap, if one is left.
bool Worker::take_place()
{
    std::uint32_t open = shared_.open.load(std::memory_order_relaxed);
    do {
        if (open >= config_.max_connections) return false;
    } while (!shared_.open.compare_exchange_weak(open, open + 1, std::memory_order_relaxed));
    return true;
}

std::int64_t Worker::wake_at() const
{
    std::int64_t wake = next_scan_;
    if (shutting_down_) wake = std::min(wake, drain_ended_ ? drain_end_ + kDrainFinishNs : drain_end_);
    return wake;
}

void Worker::run()
{
    io_uring* ring = ring_.get();
    for (;;) {
        const std::int64_t wake = wake_at();
        io_uring_cqe* first = nullptr;
        close_pending();
        arm_accept();  // after the evicted connections' descriptors are closed
        if (wake == kNever) {
            io_uring_submit_and_wait_timeout(ring, &first, 1, nullptr, nullptr);
        } else {
            // Rounded up, plus 1 ms: a timeout never fires early (SPEC §7.5).
            const std::int64_t left = std::max<std::int64_t>(0, wake - monotonic_ns()) + 1'000'000;
            __kernel_timespec ts{.tv_sec = left / kNs, .tv_nsec = left % kNs};
            io_uring_submit_and_wait_timeout(ring, &first, 1, &ts, nullptr);
        }
        now_ = monotonic_ns();
        date_.update(std::time(nullptr));
        unsigned head, seen = 0;
        io_uring_cqe* cqe;
        io_uring_for_each_cqe(ring, head, cqe)
        {
            dispatch(*cqe);
            seen++;
        }
        io_uring_cq_advance(ring, seen);
        close_pending();  // the places of the connections the batch closed, for those at the cap
        for (int fd : at_cap_) admit(fd, kAtCap);
        at_cap_.clear();
        if (next_scan_ <= now_) expire();
        if (shutting_down_) {
            if (!drain_ended_ && now_ >= drain_end_) end_drain();
            if (live_ == 0 || (drain_ended_ && now_ >= drain_end_ + kDrainFinishNs)) break;
        }
    }
    // Leave nothing in flight that points into this worker's memory.
    for (std::uint32_t i = 0; i < conns_.size(); i++)
        if (!conns_[i].closed && conns_[i].fd >= 0) close_conn(i);
    close_pending();
}

// Submits what is queued, then closes the descriptors of the connections closed since and
// gives their places under the cap back: a place is a descriptor held.
void Worker::close_pending()
{
    if (closing_fds_.empty()) return;
    io_uring_submit(ring_.get());
    for (int fd : closing_fds_) ::close(fd);
    shared_.open.fetch_sub(std::uint32_t(closing_fds_.size()), std::memory_order_relaxed);
    closing_fds_.clear();
}

void Worker::dispatch(const io_uring_cqe& cqe)
{
    const std::uint64_t data = io_uring_cqe_get_data64(&cqe);
    switch (op_of(data)) {
    case Op::Ignore: break;
    case Op::Accept: on_accept(Place(slot_of(data)), cqe); break;
    case Op::Recv: on_recv(slot_of(data), cqe); break;
    case Op::Send: on_send(slot_of(data), cqe.res); break;
    case Op::Shutdown:
        if (!shutting_down_) begin_shutdown();
        break;
    }
}

std::uint32_t Worker::take_slot()
{
    if (free_slots_.empty()) {
        conns_.emplace_back();
        return std::uint32_t(conns_.size() - 1);
    }
    const std::uint32_t i = free_slots_.back();
    free_slots_.pop_back();
    return i;
}

// A closed connection's slot is free once no completion can name it; with no slot left
// in use, the arrays are released, so memory returns to its baseline (SPEC §7.5).
void Worker::free_slot_if_done(std::uint32_t i)
{
    Conn& c = conns_[i];
    if (!c.closed || c.vacant || c.recv_armed || c.send_inflight) return;
    if (c.out) {
        if (pool_.size() < kPoolKeep)
            pool_.push_back(c.out);
        else
            std::free(c.out);
    }
    c = Conn{};
    c.closed = c.vacant = true;
    free_slots_.push_back(i);
    if (--live_ == 0) {
        std::vector<Conn>().swap(conns_);
        std::vector<std::uint32_t>().swap(free_slots_);
    }
}

// Closes the descriptor at once; the kernel lets the socket go once the operations in
// flight, cancelled here, complete.
void Worker::close_conn(std::uint32_t i)
{
    Conn& c = conns_[i];
    if (c.closed) return;
    if (c.recv_armed && !c.recv_cancelled) {
        io_uring_sqe* s = ring_.sqe();
        io_uring_prep_cancel64(s, tag(Op::Recv, i), 0);
        io_uring_sqe_set_data64(s, tag(Op::Ignore));
        c.recv_cancelled = true;
    }
    if (c.send_inflight) {
        io_uring_sqe* s = ring_.sqe();
        io_uring_prep_cancel64(s, tag(Op::Send, i), 0);
        io_uring_sqe_set_data64(s, tag(Op::Ignore));
    }
    // Closed after the next submission: a queued entry names the descriptor by number, and
    // another thread could be given the number back before the kernel reads the entry.
    closing_fds_.push_back(c.fd);
    c.fd = -1;
    c.closed = true;
    std::vector<std::uint8_t>().swap(c.leftover);
    free_slot_if_done(i);
}

void Worker::arm_recv(std::uint32_t i)
{
    Conn& c = conns_[i];
    io_uring_sqe* s = ring_.sqe();
    io_uring_prep_recv_multishot(s, c.fd, nullptr, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = buffers_.group();
    io_uring_sqe_set_data64(s, tag(Op::Recv, i));
    c.recv_armed = true;
    c.recv_cancelled = false;
}

// The connection least likely to be a client (SPEC §7.5: lingering, then the oldest
// partial head, then the longest silent); UINT32_MAX when none may be chosen.
std::uint32_t Worker::choose_victim() const
{
    std::uint32_t best = UINT32_MAX;
    int best_class = 3;
    std::int64_t best_since = kNever;
    for (std::uint32_t i = 0; i < conns_.size(); i++) {
        int klass;
        std::int64_t since;
        if (!eviction_rank(conns_[i], klass, since)) continue;
        if (klass < best_class || (klass == best_class && since < best_since))
            best = i, best_class = klass, best_since = since;
    }
    return best;
}

// Counts a new connection; at the cap, closes the connection least likely to be a client
// to make room. False when none may be chosen: the new one is then closed, unread (§7.5).
// A candidate's state lags its socket by what arrived since the batch was reaped: a
// client's request may be there, which makes it no candidate (§7.5). So, where that keeps
// octets in order, the candidate's socket is read into its state first (an attacker's
// drip leaves it a candidate, a request is answered) and the choice made again.
bool Worker::make_room()
{
    if (shared_.open.fetch_add(1, std::memory_order_relaxed) < config_.max_connections) return true;
    std::uint32_t read[kVictimReads];
    std::size_t reads = 0;
    for (;;) {  // each turn returns or reads one more candidate: at most kVictimReads + 1
        const std::uint32_t victim = choose_victim();
        if (victim == UINT32_MAX) break;
        // Asked each time: settle() may have submitted a full queue, posting completions.
        const bool as_is = !may_read_armed() || conns_[victim].phase != Phase::Open || reads == kVictimReads ||
                           std::find(read, read + reads, victim) != read + reads;
        if (as_is || !read_held(victim)) {
            close_conn(victim);
            return true;
        }
        read[reads++] = victim;
        settle(victim);
        if (victim >= conns_.size() || conns_[victim].closed) return true;  // its peer was done: room made
    }
    shared_.open.fetch_sub(1, std::memory_order_relaxed);
    return false;
}

// A new connection, in the place its accept held, or, accepted at the cap, after the batch
// of completions, so that what the batch delivered to the others is known before one is
// chosen (SPEC §7.5). Accepted before the listener closed, so served, in the drain too (§7.6).
void Worker::on_accept(Place place, const io_uring_cqe& cqe)
{
    accepts_[place]--;
    if (cqe.res < 0) {
        if (place == kPlaced) shared_.open.fetch_sub(1, std::memory_order_relaxed);
    } else if (place == kAtCap && shared_.open.load(std::memory_order_relaxed) >= config_.max_connections) {
        at_cap_.push_back(cqe.res);
    } else {
        admit(cqe.res, place);
    }
}

// Reads the new connection at once, as the flagship does: the listener defers the accept
// until the first octets arrive (listener.hpp), so a client's request is there already,
// and a connection whose request is answered is not the one the next arrival at the cap
// evicts. No receive is armed yet, so octets stay in order. The clock is read again:
// among a burst accepted in one batch, the first has waited longest (§7.5).
void Worker::admit(int fd, Place place)
{
    if (place == kAtCap && !make_room()) {
        ::close(fd);
        return;
    }
    now_ = std::max(now_, monotonic_ns());
    const std::uint32_t i = take_slot();
    live_++;
    Conn& c = conns_[i];
    c = Conn{};
    c.fd = fd;
    c.head_started = now_;
    c.last_progress = now_;
    if (!read_held(i)) return close_conn(i);
    settle(i);
}

// Reads what connection i's socket holds now into its state, until an answer is queued,
// reading pauses, the peer is done or the socket is drained. Only where no receive of the
// ring can deliver earlier octets of i afterwards: none armed (admit), or may_read_armed().
// False on a receive error.
bool Worker::read_held(std::uint32_t i)
{
    std::uint8_t in[kBufferSize];
    for (unsigned reads = 0; reads < kHeldReads; reads++) {
        Conn& c = conns_[i];
        if (c.phase != Phase::Open || c.paused || c.peer_done || c.out_len > 0) break;
        const ssize_t n = ::recv(c.fd, in, sizeof in, MSG_DONTWAIT);
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
        if (n == 0) {
            c.peer_done = true;
            break;
        }
        take_input(i, {in, std::size_t(n)});
        if (std::size_t(n) < sizeof in) break;  // drained when read
    }
    return true;
}

// Whether a socket with a multishot receive armed may be read directly. With deferred task
// running, the kernel moves octets into this ring's receives only inside this thread's
// io_uring_enter; once every completion it posted is reaped (and its octets taken in), a
// read takes the octets that come next. Without it, a receive may complete on the return
// of any system call, ahead of the read.
bool Worker::may_read_armed()
{
    return ring_.deferred_taskrun() && io_uring_cq_ready(ring_.get()) == 0;
}

void Worker::note_deadline(const Conn& c)
{
    bool unused;
    next_scan_ = std::min(next_scan_, deadline(c, config_.header_timeout_ns, config_.idle_timeout_ns, unused));
}

void Worker::on_recv(std::uint32_t i, const io_uring_cqe& cqe)
{
    Conn& c = conns_[i];
    if (!(cqe.flags & IORING_CQE_F_MORE)) c.recv_armed = false;
    if (cqe.flags & IORING_CQE_F_BUFFER) {
        const auto id = std::uint16_t(cqe.flags >> IORING_CQE_BUFFER_SHIFT);
        if (cqe.res > 0 && !c.closed) take_input(i, buffers_.data(id, std::size_t(cqe.res)));
        buffers_.give_back(id);
    }
    if (c.closed) return free_slot_if_done(i);
    if (cqe.res == 0) {
        c.peer_done = true;
    } else if (cqe.res < 0 && cqe.res != -ENOBUFS && cqe.res != -ECANCELED) {
        return close_conn(i);
    }
    settle(i);
}

// Octets received on connection i.
void Worker::take_input(std::uint32_t i, std::span<const std::uint8_t> in)
{
    Conn& c = conns_[i];
    switch (c.phase) {
    case Phase::Lingering: c.discarded += std::uint32_t(in.size()); return;
    case Phase::Closing: return;  // nothing after a closing request is processed (§7.2)
    case Phase::Open: break;
    }
    c.last_progress = now_;
    if (c.paused || !c.leftover.empty()) {
        c.leftover.insert(c.leftover.end(), in.begin(), in.end());
        if (!c.paused) serve_leftover(i);
        return;
    }
    bool answered = false;
    const std::size_t consumed = serve(c, in, answered);
    if (consumed < in.size() && c.phase == Phase::Open) c.leftover.assign(in.begin() + std::ptrdiff_t(consumed), in.end());
    if (answered || c.head_started < 0) c.head_started = c.leftover.empty() ? -1 : now_;
}

// Answers what leftover holds, keeping the rest.
void Worker::serve_leftover(std::uint32_t i)
{
    Conn& c = conns_[i];
    bool answered = false;
    const std::size_t consumed = serve(c, c.leftover, answered);
    if (consumed >= c.leftover.size() || c.phase != Phase::Open)
        std::vector<std::uint8_t>().swap(c.leftover);
    else if (consumed > 0)
        c.leftover.erase(c.leftover.begin(), c.leftover.begin() + std::ptrdiff_t(consumed));
    if (answered || c.head_started < 0) c.head_started = c.leftover.empty() ? -1 : now_;
}

void Worker::write_answer(Conn& c, const Answer& a)
{
    if (!c.out) {
        if (pool_.empty()) {
            c.out = static_cast<char*>(std::malloc(out_capacity_));
            if (!c.out) std::abort();  // out of memory: nothing sensible is left to do
        } else {
            c.out = pool_.back();
            pool_.pop_back();
        }
    }
    c.out_len += std::uint32_t(write_response(c.out + c.out_len, a, redirects_, date_));
}

// Queues a refusal with Connection: close; the client may still be sending.
void Worker::refuse(Conn& c, Reject why)
{
    write_answer(c, Answer{.kind = Answer::Kind::Refused, .reject = why, .persistence = Persistence::Close});
    c.phase = Phase::Closing;
    c.linger = true;
}

// Answers every complete request at the start of `in`, discarding bodies; returns the
// octets consumed. Stops at the end, at a partial head, at a closing response, or at the
// output bound (then c.paused).
std::size_t Worker::serve(Conn& c, std::span<const std::uint8_t> in, bool& answered)
{
    std::size_t at = 0;
    answered = false;
    c.paused = false;
    for (;;) {
        if (c.body_left > 0) {
            const std::uint64_t skip = std::min<std::uint64_t>(c.body_left, in.size() - at);
            c.body_left -= skip;
            at += std::size_t(skip);
        }
        if (at == in.size() || c.body_left > 0) return at;
        if (output_full(c)) {
            c.paused = true;
            return at;
        }
        const Parse p = c.parser.more(in.subspan(at));
        if (p.outcome != Outcome::Partial) c.parser.reset();
        switch (p.outcome) {
        case Outcome::Complete: {
            const Request& req = p.request;
            answered = true;
            at += req.head_len;
            const bool close = shutting_down_ || !req.keep_alive || req.chunked || req.expect_continue;
            Answer a{.kind = Answer::Kind::NotFound, .head_method = req.head_method};
            a.persistence = close ? Persistence::Close : req.http10 ? Persistence::KeepAlive : Persistence::KeepOpen;
            switch (req.route) {
            case Route::Redirect:
                a.kind = Answer::Kind::Redirect;
                a.seeded = req.seeded;
                a.k = req.seeded ? k_for_hash(req.seed_hash, redirects_.count())
                                 : std::uint32_t(draw(rng_) % redirects_.count()) + 1;
                break;
            case Route::Health: a.kind = Answer::Kind::Health; break;
            case Route::NotFound: a.kind = Answer::Kind::NotFound; break;
            case Route::MethodNotAllowed: a.kind = Answer::Kind::MethodNotAllowed; break;
            }
            write_answer(c, a);
            if (close) {
                // A request that asked to close, with nothing after it and no body to
                // come, leaves the client nothing to send: no need to linger (§7.4).
                const bool done = !req.keep_alive && !req.chunked && req.content_length == 0 && !shutting_down_ &&
                                  at == in.size();
                c.phase = Phase::Closing;
                c.linger = !done;
                return in.size();
            }
            c.body_left = req.content_length;
            break;
        }
        case Outcome::Partial: return at + p.empty_lines;
        case Outcome::Error:
            refuse(c, p.reject);
            answered = true;
            return in.size();
        }
    }
}

// After an event on connection i: send what is queued, move to lingering or close, and
// keep a receive armed exactly while input is wanted.
void Worker::settle(std::uint32_t i)
{
    Conn& c = conns_[i];
    if (c.phase == Phase::Open && c.peer_done && !c.paused) {
        // Every whole request the peer sent is answered; a partial one never ends. The
        // peer has shut its side: nothing more can come, no need to linger.
        c.phase = Phase::Closing;
        c.linger = false;
        std::vector<std::uint8_t>().swap(c.leftover);
    }
    if (!c.send_inflight && c.out_len > 0) {
        io_uring_sqe* s = ring_.sqe();
        io_uring_prep_send(s, c.fd, c.out, c.out_len, MSG_NOSIGNAL);
        io_uring_sqe_set_data64(s, tag(Op::Send, i));
        c.send_inflight = true;
        c.send_len = c.out_len;
    }
    switch (c.phase) {
    case Phase::Open: {
        const bool want = !c.paused && !c.peer_done;
        if (want && !c.recv_armed) arm_recv(i);
        if (!want && c.recv_armed && !c.recv_cancelled) {
            io_uring_sqe* s = ring_.sqe();
            io_uring_prep_cancel64(s, tag(Op::Recv, i), 0);
            io_uring_sqe_set_data64(s, tag(Op::Ignore));
            c.recv_cancelled = true;
        }
        break;
    }
    case Phase::Closing:
        if (c.out_len == 0) return finish_closing(i);
        break;
    case Phase::Lingering:
        if (c.peer_done || c.discarded >= kLingerBytes) return close_conn(i);
        if (!c.recv_armed) arm_recv(i);
        break;
    }
    note_deadline(c);
}

// A closing connection sent everything: close, or shut the write side and linger (§7.4).
void Worker::finish_closing(std::uint32_t i)
{
    Conn& c = conns_[i];
    if (!c.linger || ::shutdown(c.fd, SHUT_WR) != 0) return close_conn(i);
    std::vector<std::uint8_t>().swap(c.leftover);
    c.phase = Phase::Lingering;
    c.linger_until = now_ + kLingerNs;
    c.discarded = 0;
    settle(i);
}

void Worker::on_send(std::uint32_t i, int res)
{
    Conn& c = conns_[i];
    c.send_inflight = false;
    if (c.closed) return free_slot_if_done(i);
    if (res < 0) return close_conn(i);
    const auto sent = std::uint32_t(res);
    if (sent > 0) c.last_progress = now_;
    c.out_len -= sent;
    if (c.out_len > 0) {
        std::memmove(c.out, c.out + sent, c.out_len);
    } else {
        if (pool_.size() < kPoolKeep)
            pool_.push_back(c.out);
        else
            std::free(c.out);
        c.out = nullptr;
    }
    // Reading was paused while the output bound was reached: go on with what is held.
    if (c.paused && c.phase == Phase::Open && !output_full(c)) {
        c.paused = false;
        serve_leftover(i);
    }
    settle(i);
}

// Applies every passed deadline; the earliest left becomes next_scan_.
void Worker::expire()
{
    next_scan_ = kNever;
    for (std::uint32_t i = 0; i < conns_.size(); i++) {
        Conn& c = conns_[i];
        if (c.closed) continue;
        bool request_timeout;
        if (deadline(c, config_.header_timeout_ns, config_.idle_timeout_ns, request_timeout) > now_) {
            note_deadline(c);
            continue;
        }
        if (!request_timeout) {
            close_conn(i);
        } else {
            std::vector<std::uint8_t>().swap(c.leftover);
            c.parser.reset();
            refuse(c, Reject::Timeout);
            settle(i);
        }
        if (conns_.empty()) return;
    }
}

// SIGTERM/SIGINT: stop listening at once; serve the open connections for the drain
// window, counted from the signal, every answer with Connection: close (SPEC §7.6). With
// several threads, no answer goes out before every listener is closed: a client told to
// close must not reconnect to another thread's listener that has not seen the signal yet.
// The completions after this one in the batch are handled after the wait.
void Worker::begin_shutdown()
{
    shutting_down_ = true;
    drain_end_ = now_ + std::min(config_.drain_timeout_ns, config_.header_timeout_ns);
    if (accepts_in_flight() > 0) {
        io_uring_sqe* s = ring_.sqe();
        io_uring_prep_cancel_fd(s, listener_.get(), IORING_ASYNC_CANCEL_ALL);
        io_uring_sqe_set_data64(s, tag(Op::Ignore));
    }
    // Submitted now; under DEFER_TASKRUN the accepts complete, and let go of the socket,
    // only at this ring's next wait for completions: after the drain's first answers.
    io_uring_submit(ring_.get());
    // What the kernel already queued on the listener is an open connection: taken before
    // the listener closes (closing would reset it), answered after every listener is closed.
    std::vector<int> queued;
    if (::fcntl(listener_.get(), F_SETFL, O_NONBLOCK) == 0) {
        for (;;) {
            const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
            if (fd >= 0)
                queued.push_back(fd);
            else if (errno != EINTR && errno != ECONNABORTED)
                break;  // EAGAIN: the queue is empty (or out of descriptors)
        }
    }
    // Stops listening at once, though the cancelled accepts still hold the socket: a new
    // connection is refused before any answer says close. Closing alone left it listening.
    ::shutdown(listener_.get(), SHUT_RD);
    close_listener();
    shared_.listeners.wait_all_closed(shared_.listeners_wait);
    now_ = monotonic_ns();
    for (const int fd : queued) admit(fd, kAtCap);
}

// Closes this thread's listener and counts it closed.
void Worker::close_listener()
{
    listener_.reset();
    shared_.listeners.closed_one();
}

// The window ended: what the sockets already hold is answered; what has nothing received
// or an incomplete head is closed unanswered; responses under way are finished.
void Worker::end_drain()
{
    drain_ended_ = true;
    for (std::uint32_t i = 0; i < conns_.size(); i++) {
        Conn& c = conns_[i];
        if (c.closed || c.phase != Phase::Open) continue;
        // Completions are all reaped, so no receive of the kernel's is between the socket
        // and this read: octets stay in order.
        const bool ok = read_held(i);
        if (!ok || (c.phase == Phase::Open && c.out_len == 0)) {
            close_conn(i);
            if (conns_.empty()) return;
        } else {
            settle(i);
        }
    }
}

}  // namespace

void Listeners::closed_one()
{
    const std::lock_guard<std::mutex> hold(lock_);
    if (++closed_ == total_) all_closed_.notify_all();
}

void Listeners::wait_all_closed(std::chrono::milliseconds at_most)
{
    std::unique_lock<std::mutex> hold(lock_);
    all_closed_.wait_for(hold, at_most, [this] { return closed_ >= total_; });
}

std::string io_uring_unavailable()
{
    Ring probe;
    const int rc = probe.init(4);
    if (rc == 0) return {};
    std::string why = "renard: io_uring: cannot set up a ring: ";
    why += std::strerror(-rc);
    if (rc == -EPERM || rc == -ENOSYS)
        why += " (disabled by kernel.io_uring_disabled, or blocked by a seccomp profile such as Docker's default)";
    return why;
}

int run_worker(Shared& shared, int listen_fd, std::string& error)
{
    auto worker = std::make_unique<Worker>(shared, listen_fd);
    if (worker->setup(error) != 0) return -1;
    worker->run();
    return 0;
}

}  // namespace renard
