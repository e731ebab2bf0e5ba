// renard as a C++ user writes it with cpp-httplib: an httplib::Server, one handler for GET /
// that calls res.set_redirect(url, 302); ?seed= through req.has_param / get_param_value.
// Usage: renard-httplib HOST PORT COUNT LOCATION   (LOCATION contains {n})
#include <httplib.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <string>

namespace {

std::uint64_t fnv1a64(const std::string& octets) {
    std::uint64_t h = 0xcbf29ce484222325u;
    for (unsigned char octet : octets) h = (h ^ octet) * 0x100000001b3u;
    return h;
}

std::string render(std::string location, unsigned long k) {
    const std::string n = std::to_string(k);
    for (auto at = location.find("{n}"); at != std::string::npos; at = location.find("{n}", at + n.size()))
        location.replace(at, 3, n);
    return location;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::cerr << "usage: renard-httplib HOST PORT COUNT LOCATION\n";
        return 2;
    }
    const std::string host = argv[1], location = argv[4];
    const int port = std::stoi(argv[2]);
    const unsigned long count = std::stoul(argv[3]);

    httplib::Server server;
    server.Get("/", [&](const httplib::Request& req, httplib::Response& res) {
        // one generator per handler thread, seeded from the OS (std::random_device)
        thread_local std::mt19937_64 generator{std::random_device{}()};
        const unsigned long k = req.has_param("seed")
                                    ? fnv1a64(req.get_param_value("seed")) % count + 1
                                    : std::uniform_int_distribution<unsigned long>{1, count}(generator);
        res.set_redirect(render(location, k), 302);
    });
    if (!server.listen(host, port)) {
        std::cerr << "renard-httplib: cannot listen on " << host << ":" << port << "\n";
        return 1;
    }
}
