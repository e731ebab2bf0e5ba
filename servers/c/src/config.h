/* Configuration (SPEC §1): flags, RENARD_* variables, defaults. A flag wins over its
 * variable, a variable over the default; an empty variable is unset. */
#ifndef RENARD_CONFIG_H
#define RENARD_CONFIG_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#define RENARD_VERSION "0.1.0"

/* A validated configuration. Durations are in nanoseconds. */
struct config {
    struct sockaddr_storage listen; /* port 0 picks a free port */
    socklen_t listen_len;
    uint32_t count;                 /* N: k is drawn from 1..N */
    char location[2049];            /* visible ASCII, holds {n} */
    uint32_t threads;
    int64_t header_timeout_ns;      /* > 0 */
    int64_t idle_timeout_ns;        /* > 0 */
    uint32_t max_connections;
    int64_t drain_timeout_ns;       /* >= 0 (SPEC §7.6) */
};

enum command { COMMAND_SERVE, COMMAND_HELP, COMMAND_VERSION, COMMAND_ERROR };

extern const char USAGE[];

/* Read argv[0..argc) (without the program name) and the variables through getvar (NULL
 * for unset); --threads defaults to cpus. COMMAND_ERROR: error[0..size) holds the one
 * stderr line, without its newline. */
enum command config_parse(int argc, char *const *argv, const char *(*getvar)(const char *),
                          uint32_t cpus, struct config *c, char *error, size_t size);

/* The address as HOST:PORT ([ADDR]:PORT for IPv6) into out. */
void format_address(const struct sockaddr *a, char *out, size_t size);

#endif
