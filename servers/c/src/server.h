/* Listeners and the event loop of one thread (SPEC §7.5, §7.6). Each thread owns a
 * SO_REUSEPORT listener on the same address, an epoll instance, and its connections; the
 * state shared between threads is the count of open connections (for the cap) and, for
 * the drain, the count of listeners closed. */
#ifndef RENARD_SERVER_H
#define RENARD_SERVER_H

#include <pthread.h>
#include <stdatomic.h>

#include "config.h"
#include "response.h"

/* The listeners' part of the drain (SPEC §7.6): each thread closes its own listener and
 * counts it here, then waits until every one is closed before it answers anything, so
 * that a client told to close cannot reconnect to a thread that has not seen the signal. */
struct listeners {
    pthread_mutex_t lock;
    pthread_cond_t all_closed; /* on CLOCK_MONOTONIC; broadcast when closed reaches total */
    unsigned closed, total;    /* under lock */
};

/* What every thread reads; built once. */
struct shared {
    struct config config;
    struct redirects redirects;
    atomic_uint open;  /* open connections across all threads */
    int shutdown_fd;   /* eventfd written by the SIGTERM/SIGINT handler, never read */
    struct listeners listeners;
};

/* Before any loop runs: total listeners, none closed yet; 0, or an errno value. */
int server_listeners_init(struct listeners *listeners, unsigned total);

/* Run one thread's event loop on listen_fd until shutdown completes; 0, or -1 on a
 * failure to set up. */
int server_run(struct shared *shared, int listen_fd);

#endif
