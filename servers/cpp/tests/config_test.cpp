// SPEC §1: flags, variables, defaults, and the one-line errors.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "config.hpp"

namespace renard {
namespace {

struct Parsed {
    Command command;
    Config config;
    std::string error;
};

Parsed parse(std::vector<std::string> args, std::map<std::string, std::string> env = {})
{
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    Parsed p{};
    p.command = parse_config(argv, [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    }, 4, p.config, p.error);
    return p;
}

TEST(Config, Defaults)
{
    const Parsed p = parse({});
    ASSERT_EQ(p.command, Command::Serve);
    EXPECT_EQ(p.config.count, 21u);
    EXPECT_EQ(p.config.threads, 4u);
    EXPECT_EQ(p.config.location, "https://avatar.example.org/Renard-{n}.png");
    EXPECT_EQ(p.config.header_timeout_ns, 10'000'000'000);
    EXPECT_EQ(p.config.idle_timeout_ns, 60'000'000'000);
    EXPECT_EQ(p.config.max_connections, 10000u);
    EXPECT_EQ(p.config.drain_timeout_ns, 1'000'000'000);
    EXPECT_EQ(format_address(reinterpret_cast<const sockaddr*>(&p.config.listen)), "127.0.0.1:8080");
}

TEST(Config, FlagWinsOverVariableWinsOverDefault)
{
    EXPECT_EQ(parse({"--count", "5"}, {{"RENARD_COUNT", "7"}}).config.count, 5u);
    EXPECT_EQ(parse({"--count=5"}).config.count, 5u);
    EXPECT_EQ(parse({}, {{"RENARD_COUNT", "7"}}).config.count, 7u);
    EXPECT_EQ(parse({}, {{"RENARD_COUNT", ""}}).config.count, 21u);
}

TEST(Config, BadValueNamesTheFlagOrVariable)
{
    EXPECT_EQ(parse({"--count", "0"}).error, "renard: --count: must be an integer from 1 to 1000000 (got \"0\")");
    EXPECT_EQ(parse({}, {{"RENARD_COUNT", "x"}}).error, "renard: RENARD_COUNT: must be an integer from 1 to 1000000 (got \"x\")");
    EXPECT_EQ(parse({"--location", "/no-placeholder"}).command, Command::Error);
    EXPECT_EQ(parse({"--location", "/a b{n}"}).command, Command::Error);
    EXPECT_EQ(parse({"--header-timeout", "0"}).command, Command::Error);
    EXPECT_EQ(parse({"--drain-timeout", "0"}).command, Command::Serve);
    EXPECT_EQ(parse({"--idle-timeout", "86400.1"}).command, Command::Error);
    EXPECT_EQ(parse({"--listen", "localhost:80"}).command, Command::Error);
    EXPECT_EQ(parse({"--listen", "1.2.3.4:65536"}).command, Command::Error);
}

TEST(Config, UnknownMissingPositional)
{
    EXPECT_EQ(parse({"--nope"}).error, "renard: --nope: unknown flag (see --help)");
    EXPECT_EQ(parse({"--count"}).error, "renard: --count: missing value");
    EXPECT_EQ(parse({"serve"}).command, Command::Error);
    EXPECT_EQ(parse({"--help"}).command, Command::Help);
    EXPECT_EQ(parse({"--version"}).command, Command::Version);
}

TEST(Config, Ipv6AndFractions)
{
    const Parsed p = parse({"--listen", "[::1]:0", "--header-timeout", "0.5"});
    ASSERT_EQ(p.command, Command::Serve);
    EXPECT_EQ(format_address(reinterpret_cast<const sockaddr*>(&p.config.listen)), "[::1]:0");
    EXPECT_EQ(p.config.header_timeout_ns, 500'000'000);
}

}  // namespace
}  // namespace renard
