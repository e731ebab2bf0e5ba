// Seeded choice (SPEC §3, §3.1): FNV-1a-64 over the decoded `seed` query value.
#pragma once

#include <cstdint>
#include <span>

namespace renard {

inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

// FNV-1a-64 of b.
std::uint64_t fnv1a(std::span<const std::uint8_t> b);

// True, and hash = FNV-1a-64 of the seed S, when the target (or its path and query) has a
// query with a `seed` parameter: S is the form-urlencoded-decoded value of the first
// parameter whose decoded name is exactly `seed`. Never allocates.
bool seed_hash(std::span<const std::uint8_t> target, std::uint64_t& hash);

// k in 1..count for the seed whose FNV-1a-64 is hash (count >= 1).
constexpr std::uint32_t k_for_hash(std::uint64_t hash, std::uint32_t count) { return std::uint32_t(hash % count) + 1; }

}  // namespace renard
