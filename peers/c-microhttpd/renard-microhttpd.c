/* renard as a C user writes it with GNU libmicrohttpd: a daemon with its own polling thread
 * and an access handler that queues a 302 response with a Location header.
 * GET / draws k uniformly in 1..COUNT; GET /?seed=NAME gives FNV-1a-64(NAME) mod COUNT + 1.
 * Usage: renard-microhttpd HOST PORT COUNT LOCATION   (LOCATION contains {n}) */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static unsigned long count;
static const char *location;

/* A uniform draw in [0, bound) from the kernel's generator: no modulo bias. */
static unsigned long uniform(unsigned long bound) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound, x;
    do {
        if (getrandom(&x, sizeof x, 0) != sizeof x) abort();
    } while (x >= limit);
    return x % bound;
}

static uint64_t fnv1a64(const char *octets, size_t length) {
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < length; i++) h = (h ^ (unsigned char)octets[i]) * 0x100000001b3u;
    return h;
}

/* LOCATION with every {n} replaced by k, in out (of size out_size); 0 if it does not fit. */
static int render(unsigned long k, char *out, size_t out_size) {
    char n[24];
    int n_length = snprintf(n, sizeof n, "%lu", k);
    size_t used = 0;
    for (const char *p = location; *p;) {
        const char *piece = p;
        size_t piece_length = 1;
        if (strncmp(p, "{n}", 3) == 0) piece = n, piece_length = (size_t)n_length, p += 3;
        else p++;
        if (used + piece_length >= out_size) return 0;
        memcpy(out + used, piece, piece_length);
        used += piece_length;
    }
    out[used] = '\0';
    return 1;
}

static enum MHD_Result reply(struct MHD_Connection *connection, unsigned int status, const char *where) {
    struct MHD_Response *response = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (where) MHD_add_response_header(response, MHD_HTTP_HEADER_LOCATION, where);
    enum MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    (void)cls, (void)version, (void)upload_data;
    static int headers_read;
    if (*state == NULL) { /* the first call sees the head only: answer on the next, once any body is read */
        *state = &headers_read;
        return MHD_YES;
    }
    if (*upload_data_size != 0) { /* a body: read and dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/") != 0) return reply(connection, MHD_HTTP_NOT_FOUND, NULL);
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply(connection, MHD_HTTP_METHOD_NOT_ALLOWED, NULL);
    const char *seed;
    size_t seed_length;
    unsigned long k;
    if (MHD_lookup_connection_value_n(connection, MHD_GET_ARGUMENT_KIND, "seed", 4, &seed, &seed_length) == MHD_YES)
        k = fnv1a64(seed ? seed : "", seed ? seed_length : 0) % count + 1;
    else
        k = uniform(count) + 1;
    char where[4096];
    if (!render(k, where, sizeof where)) return reply(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
    return reply(connection, MHD_HTTP_FOUND, where);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: renard-microhttpd HOST PORT COUNT LOCATION\n");
        return 2;
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    count = strtoul(argv[3], NULL, 10);
    location = argv[4];
    if (inet_pton(AF_INET, argv[1], &address.sin_addr) != 1 || count == 0) {
        fprintf(stderr, "renard-microhttpd: HOST must be an IPv4 address and COUNT at least 1\n");
        return 2;
    }
    struct MHD_Daemon *daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL,
                                                 &answer, NULL, MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_END);
    if (!daemon) {
        fprintf(stderr, "renard-microhttpd: cannot listen on %s:%s\n", argv[1], argv[2]);
        return 1;
    }
    for (;;) pause(); /* the daemon's thread serves; SIGTERM ends the process */
}
