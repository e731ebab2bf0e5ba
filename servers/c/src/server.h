/* Listeners and the event loop of one thread (SPEC §7.5, §7.6). Each thread owns a
 * SO_REUSEPORT listener on the same address, an epoll instance, and its connections; the
 * only state shared between threads is the count of open connections (for the cap). */
#ifndef RENARD_SERVER_H
#define RENARD_SERVER_H

#include <stdatomic.h>

#include "config.h"
#include "response.h"

/* What every thread reads; built once. */
struct shared {
    struct config config;
    struct redirects redirects;
    atomic_uint open;  /* open connections across all threads */
    int shutdown_fd;   /* eventfd written by the SIGTERM/SIGINT handler, never read */
};

/* A listening socket on addr with SO_REUSEPORT, or -1 with errno. */
int server_bind(const struct sockaddr *addr, socklen_t len);

/* Run one thread's event loop on listen_fd until shutdown completes; 0, or -1 on a
 * failure to set up. */
int server_run(struct shared *shared, int listen_fd);

#endif
