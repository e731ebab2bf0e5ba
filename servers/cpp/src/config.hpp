// Configuration (SPEC §1): flags, RENARD_* variables, defaults. A flag wins over its
// variable, a variable over the default; an empty variable is unset.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace renard {

inline constexpr const char* kVersion = "0.1.0";
extern const char kUsage[];

// A validated configuration; durations in nanoseconds.
struct Config {
    sockaddr_storage listen{};  // port 0 picks a free port
    socklen_t listen_len = 0;
    std::uint32_t count = 21;  // N: k is drawn from 1..N
    std::string location;      // visible ASCII, holds {n}
    std::uint32_t threads = 1;
    std::int64_t header_timeout_ns = 0;  // > 0
    std::int64_t idle_timeout_ns = 0;    // > 0
    std::uint32_t max_connections = 0;
    std::int64_t drain_timeout_ns = 0;  // >= 0 (SPEC §7.6)
};

enum class Command { Serve, Help, Version, Error };

// Reads args (without the program name) and the variables through getvar (nullptr for
// unset); --threads defaults to cpus. Command::Error: `error` holds the one stderr line.
Command parse_config(std::span<char* const> args, const std::function<const char*(const char*)>& getvar,
                     std::uint32_t cpus, Config& config, std::string& error);

// The address as HOST:PORT ([ADDR]:PORT for IPv6).
std::string format_address(const sockaddr* address);

}  // namespace renard
