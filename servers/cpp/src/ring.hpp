// RAII over the kernel objects a worker owns: a descriptor, an io_uring instance, and a
// provided-buffer ring registered with it (multishot receive picks its buffers there, so
// a connection holds no buffer while it waits).
#pragma once

#include <liburing.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace renard {

// An owned file descriptor; closed on destruction.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept
    {
        if (this != &other) reset(std::exchange(other.fd_, -1));
        return *this;
    }
    ~Fd() { reset(); }
    int get() const { return fd_; }
    // Gives the descriptor up to the caller.
    int release() { return std::exchange(fd_, -1); }
    explicit operator bool() const { return fd_ >= 0; }
    void reset(int fd = -1)
    {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

// One io_uring instance. Setup asks for IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN (the
// ring is used by its creating thread only; completions are run when the thread waits)
// and falls back to plain flags where the kernel refuses them.
class Ring {
public:
    Ring() = default;
    Ring(const Ring&) = delete;
    Ring& operator=(const Ring&) = delete;
    ~Ring()
    {
        if (ready_) io_uring_queue_exit(&ring_);
    }

    // 0, or -errno from io_uring_setup (EPERM, ENOSYS: io_uring is not available).
    int init(unsigned entries)
    {
        io_uring_params params{};
        params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SUBMIT_ALL;
        params.cq_entries = entries * 4;
        params.flags |= IORING_SETUP_CQSIZE;
        int rc = io_uring_queue_init_params(entries, &ring_, &params);
        deferred_ = rc == 0;
        if (rc == -EINVAL) {
            params = {};
            params.flags = IORING_SETUP_CQSIZE;
            params.cq_entries = entries * 4;
            rc = io_uring_queue_init_params(entries, &ring_, &params);
        }
        ready_ = rc == 0;
        return rc;
    }

    io_uring* get() { return &ring_; }
    bool deferred_taskrun() const { return deferred_; }

    // A submission entry, submitting what is queued when the queue is full.
    io_uring_sqe* sqe()
    {
        io_uring_sqe* s = io_uring_get_sqe(&ring_);
        while (!s) {
            io_uring_submit(&ring_);
            s = io_uring_get_sqe(&ring_);
        }
        return s;
    }

private:
    io_uring ring_{};
    bool ready_ = false;
    bool deferred_ = false;
};

// `count` buffers of `size` octets (count a power of two) in group `group`, handed to the
// kernel for multishot receive; a buffer comes back with its completion and is returned
// with give_back once its octets are used. Memory is mapped, so pages the kernel never
// wrote are never resident.
class BufferRing {
public:
    BufferRing(const BufferRing&) = delete;
    BufferRing& operator=(const BufferRing&) = delete;
    BufferRing(unsigned count, std::size_t size, std::uint16_t group) : count_(count), size_(size), group_(group) {}
    ~BufferRing()
    {
        if (ring_) ::munmap(ring_, count_ * sizeof(io_uring_buf));
        if (buffers_) ::munmap(buffers_, count_ * size_);
    }

    // 0, or -errno.
    int attach(io_uring* ring)
    {
        void* r = ::mmap(nullptr, count_ * sizeof(io_uring_buf), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        void* b = ::mmap(nullptr, count_ * size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (r == MAP_FAILED || b == MAP_FAILED) return -ENOMEM;
        ring_ = static_cast<io_uring_buf_ring*>(r);
        buffers_ = static_cast<std::uint8_t*>(b);
        io_uring_buf_reg reg{};
        reg.ring_addr = reinterpret_cast<std::uintptr_t>(ring_);
        reg.ring_entries = count_;
        reg.bgid = group_;
        if (int rc = io_uring_register_buf_ring(ring, &reg, 0); rc != 0) return rc;
        io_uring_buf_ring_init(ring_);
        for (unsigned id = 0; id < count_; id++) add(std::uint16_t(id), int(id));
        io_uring_buf_ring_advance(ring_, int(count_));
        return 0;
    }

    std::uint16_t group() const { return group_; }

    // The octets the kernel put in buffer `id`.
    std::span<const std::uint8_t> data(std::uint16_t id, std::size_t len) const { return {buffers_ + id * size_, len}; }

    // Buffer `id` is the kernel's again.
    void give_back(std::uint16_t id)
    {
        add(id, 0);
        io_uring_buf_ring_advance(ring_, 1);
    }

private:
    // Buffer `id` at `offset` entries past the ring's tail (visible once advanced).
    void add(std::uint16_t id, int offset)
    {
        io_uring_buf_ring_add(ring_, buffers_ + id * size_, unsigned(size_), id, io_uring_buf_ring_mask(count_), offset);
    }

    unsigned count_;
    std::size_t size_;
    std::uint16_t group_;
    io_uring_buf_ring* ring_ = nullptr;
    std::uint8_t* buffers_ = nullptr;
};

}  // namespace renard
