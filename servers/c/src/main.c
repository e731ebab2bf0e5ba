/* renard: answers GET / with a 302 to a random avatar (spec/SPEC.md).
 *
 * main reads as the story: configuration, listeners, the shutdown signal, one event loop
 * per thread (thread 0 is the main thread), exit 0 once every loop has shut down. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config.h"
#include "listener.h"
#include "server.h"

static struct shared shared;

/* SIGTERM/SIGINT: make the eventfd readable; every loop polls it (SPEC §7.6). */
static void on_signal(int signum)
{
    (void)signum;
    int saved = errno;
    uint64_t one = 1;
    ssize_t ignored = write(shared.shutdown_fd, &one, sizeof one);
    (void)ignored;
    errno = saved;
}

static const char *getvar(const char *name) { return getenv(name); }

/* One line on stderr, exit 1: a resource the server needs could not be had. */
static void fatal(const char *what)
{
    fprintf(stderr, "renard: %s: %s (os error %d)\n", what, strerror(errno), errno);
    exit(1);
}

/* Lift the soft descriptor limit to the hard one, so that --max-connections can be met. */
static void raise_descriptor_limit(void)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

static void *worker(void *listen_fd)
{
    return (void *)(intptr_t)server_run(&shared, (int)(intptr_t)listen_fd);
}

int main(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
    char error[512];
    struct config *config = &shared.config;
    switch (config_parse(argc - 1, argv + 1, getvar, cpus > 0 ? (uint32_t)cpus : 1, config, error, sizeof error)) {
    case COMMAND_HELP:
        fputs(USAGE, stdout);
        return 0;
    case COMMAND_VERSION:
        puts("renard " RENARD_VERSION);
        return 0;
    case COMMAND_ERROR:
        fprintf(stderr, "%s\n", error);
        return 2;
    case COMMAND_SERVE:
        break;
    }
    raise_descriptor_limit();

    /* One SO_REUSEPORT listener per thread, all on the port the first one got. */
    char address[80];
    format_address((struct sockaddr *)&config->listen, address, sizeof address);
    int *listeners = calloc(config->threads, sizeof *listeners);
    if (!listeners) fatal("memory");
    struct sockaddr_storage bound;
    socklen_t bound_len = sizeof bound;
    listeners[0] = listener_bind((struct sockaddr *)&config->listen, config->listen_len);
    if (listeners[0] < 0 || getsockname(listeners[0], (struct sockaddr *)&bound, &bound_len) != 0) {
        fprintf(stderr, "renard: --listen: cannot bind %s: %s (os error %d)\n", address, strerror(errno), errno);
        return 1;
    }
    for (uint32_t t = 1; t < config->threads; t++) {
        listeners[t] = listener_bind((struct sockaddr *)&bound, bound_len);
        if (listeners[t] < 0) {
            fprintf(stderr, "renard: --listen: cannot bind %s: %s (os error %d)\n", address, strerror(errno), errno);
            return 1;
        }
    }

    shared.shutdown_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (shared.shutdown_fd < 0) fatal("eventfd");
    errno = server_listeners_init(&shared.listeners, config->threads);
    if (errno != 0) fatal("listeners");
    struct sigaction action = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGTERM, &action, NULL) != 0 || sigaction(SIGINT, &action, NULL) != 0) fatal("signal handler");
    signal(SIGPIPE, SIG_IGN);
    if (redirects_init(&shared.redirects, config->location, config->count) != 0) fatal("memory");

    format_address((struct sockaddr *)&bound, address, sizeof address);
    fprintf(stderr, "listening on http://%s\n", address);

    pthread_t *threads = calloc(config->threads, sizeof *threads);
    pthread_attr_t attr;
    if (!threads || pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 256 * 1024) != 0) fatal("thread");
    for (uint32_t t = 1; t < config->threads; t++) {
        int rc = pthread_create(&threads[t], &attr, worker, (void *)(intptr_t)listeners[t]);
        if (rc != 0) {
            errno = rc;
            fatal("thread");
        }
    }
    int failed = server_run(&shared, listeners[0]) != 0;
    for (uint32_t t = 1; t < config->threads; t++) {
        void *result;
        pthread_join(threads[t], &result);
        failed |= result != NULL;
    }
    free(threads);
    free(listeners);
    return failed;
}
