#include "seed.hpp"

#include <algorithm>
#include <string_view>

namespace renard {
namespace {

using Bytes = std::span<const std::uint8_t>;

int hex(std::uint8_t b)
{
    if (b >= '0' && b <= '9') return b - '0';
    if (b >= 'a' && b <= 'f') return b - 'a' + 10;
    if (b >= 'A' && b <= 'F') return b - 'A' + 10;
    return -1;
}

// The form-urlencoded octet at s[i], advancing i: `+` is 0x20, `%XY` that octet, any other
// `%` stays literal (SPEC §3.1).
std::uint8_t decode_next(Bytes s, std::size_t& i)
{
    const std::uint8_t b = s[i];
    if (b == '+') return i += 1, ' ';
    if (b == '%') {
        const int hi = i + 1 < s.size() ? hex(s[i + 1]) : -1;
        const int lo = i + 2 < s.size() ? hex(s[i + 2]) : -1;
        if (hi >= 0 && lo >= 0) return i += 3, std::uint8_t(hi << 4 | lo);
    }
    i += 1;
    return b;
}

// Whether form-urlencoded s decodes to exactly word.
bool decodes_to(Bytes s, std::string_view word)
{
    std::size_t i = 0, w = 0;
    while (i < s.size()) {
        if (w == word.size() || decode_next(s, i) != std::uint8_t(word[w])) return false;
        w++;
    }
    return w == word.size();
}

}  // namespace

std::uint64_t fnv1a(Bytes b)
{
    std::uint64_t h = kFnvOffset;
    for (auto octet : b) h = (h ^ octet) * kFnvPrime;
    return h;
}

bool seed_hash(Bytes t, std::uint64_t& hash)
{
    auto q = std::find(t.begin(), t.end(), std::uint8_t('?'));
    if (q == t.end()) return false;
    Bytes rest = t.subspan(std::size_t(q - t.begin()) + 1);
    for (;;) {
        auto amp = std::find(rest.begin(), rest.end(), std::uint8_t('&'));
        const Bytes param = rest.first(std::size_t(amp - rest.begin()));
        auto eq = std::find(param.begin(), param.end(), std::uint8_t('='));
        const Bytes name = param.first(std::size_t(eq - param.begin()));
        if (decodes_to(name, "seed")) {
            const Bytes value = eq == param.end() ? Bytes{} : param.subspan(name.size() + 1);
            std::uint64_t h = kFnvOffset;
            for (std::size_t i = 0; i < value.size();) h = (h ^ decode_next(value, i)) * kFnvPrime;
            hash = h;
            return true;
        }
        if (amp == rest.end()) return false;
        rest = rest.subspan(param.size() + 1);
    }
}

}  // namespace renard
