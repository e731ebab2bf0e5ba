// libFuzzer target for the parser (SPEC §5): any input gives one of the three outcomes,
// the same whole or in two reads split at a point the input chooses; a complete head lies
// within the input; its response fits the bound the server reserves.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "request.hpp"
#include "response.hpp"
#include "seed.hpp"

namespace {

bool same(const renard::Parse& a, const renard::Parse& b)
{
    if (a.outcome != b.outcome) return false;
    if (a.outcome == renard::Outcome::Error) return a.reject == b.reject;
    if (a.outcome == renard::Outcome::Complete)
        return a.request.head_len == b.request.head_len && a.request.route == b.request.route &&
               a.request.seeded == b.request.seeded && a.request.seed_hash == b.request.seed_hash &&
               a.request.keep_alive == b.request.keep_alive && a.request.content_length == b.request.content_length;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace renard;
    const std::span<const std::uint8_t> in(data, size);
    const Parse whole = Parser::once(in);
    if (whole.outcome == Outcome::Complete && whole.request.head_len > size) std::abort();

    // Two reads, as the server feeds them: the held octets again, and more after them.
    const std::size_t split = size == 0 ? 0 : data[0] % (size + 1);
    Parser parser;
    std::basic_string<std::uint8_t> held(data, split);
    Parse two = parser.more(held);
    std::size_t dropped = 0;
    if (two.outcome == Outcome::Partial) {
        held.erase(0, two.empty_lines);
        dropped = two.empty_lines;
        held.append(data + split, size - split);
        two = parser.more(held);
        if (two.outcome == Outcome::Complete) two.request.head_len += dropped;
    }
    if (!same(whole, two)) std::abort();

    if (whole.outcome == Outcome::Complete) {
        static const Redirects redirects("https://avatar.example.org/Renard-{n}.png", 1'000'000);
        DateLine date;
        date.update(0);
        std::string out(redirects.max_response(), '\0');
        Answer a{.kind = Answer::Kind::Redirect, .k = k_for_hash(whole.request.seed_hash, redirects.count()),
                 .persistence = Persistence::KeepAlive};
        if (write_response(out.data(), a, redirects, date) > out.size()) std::abort();
    }
    return 0;
}
