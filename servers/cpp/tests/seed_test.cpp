// SPEC §3, §3.1: every case of spec/vectors/seeds.json (generated into seeds.inc).
#include <gtest/gtest.h>

#include <string>

#include "seed.hpp"

namespace renard {
namespace {

struct SeedCase {
    const char* name;
    const char* query;
    const char* seed_hex;  // nullptr: no seed, a random draw
    std::uint32_t n;
    std::uint32_t k;  // 0 when random
};

void PrintTo(const SeedCase& c, std::ostream* os) { *os << c.name; }

const SeedCase kSeeds[] = {
#include "seeds.inc"
};

std::span<const std::uint8_t> bytes(const std::string& s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

std::string unhex(const std::string& hex)
{
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

class SeedVector : public testing::TestWithParam<SeedCase> {};

TEST_P(SeedVector, FindsTheSeedAndPicksK)
{
    const SeedCase& c = GetParam();
    const std::string target = std::string("/?") + c.query;
    std::uint64_t hash = 0;
    const bool seeded = seed_hash(bytes(target), hash);
    if (!c.seed_hex) {
        EXPECT_FALSE(seeded);
        return;
    }
    ASSERT_TRUE(seeded);
    EXPECT_EQ(hash, fnv1a(bytes(unhex(c.seed_hex))));
    EXPECT_EQ(k_for_hash(hash, c.n), c.k);
}

INSTANTIATE_TEST_SUITE_P(SeedsJson, SeedVector, testing::ValuesIn(kSeeds), [](const testing::TestParamInfo<SeedCase>& row) {
    std::string name = row.param.name;
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
});

TEST(Fnv1a, EmptyIsTheOffsetBasis) { EXPECT_EQ(fnv1a({}), 0xcbf29ce484222325ULL); }

TEST(Fnv1a, KnownValue) { EXPECT_EQ(fnv1a(bytes(std::string("a"))), 0xaf63dc4c8601ec8cULL); }

}  // namespace
}  // namespace renard
