/* SPEC §7.6 with several threads: a thread's drain closes its listener, then answers
 * nothing until every thread's listener is closed, so that a client told to close cannot
 * reconnect to a sibling that has not seen the signal. One loop runs for real on a
 * loopback listener; the test is its sibling and closes its own listener when it chooses.
 * The unit build sets LISTENERS_WAIT_NS to 30 s (Makefile): the wait, not its bound.
 * Every wait here is bounded. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "config.h"
#include "listener.h"
#include "server.h"

static const char GET[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

static const char *no_variables(const char *name)
{
    return NULL;
}

struct loop_run {
    struct shared *shared;
    int listen_fd;
    int rc;
};

static void *run_loop(void *arg)
{
    struct loop_run *run = arg;
    run->rc = server_run(run->shared, run->listen_fd);
    return NULL;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Appends what fd receives to buf (kept NUL-terminated) until ms milliseconds have passed,
 * the peer closes, or until_text is in buf (NULL: never); returns the length of buf. */
static size_t receive(int fd, char *buf, size_t size, size_t len, int ms, const char *until_text)
{
    int64_t end = now_ms() + ms;
    for (int64_t left = ms; left > 0 && len + 1 < size; left = end - now_ms()) {
        if (until_text && strstr(buf, until_text)) break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0) break;
        ssize_t n = recv(fd, buf + len, size - 1 - len, 0);
        if (n <= 0) break; /* the peer closed */
        len += (size_t)n;
        buf[len] = '\0';
    }
    return len;
}

static int connect_to(const struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void drain_answers_nothing_until_every_listener_is_closed(void **state)
{
    static struct shared shared;
    memset(&shared, 0, sizeof shared);
    const char *args[] = {"--listen", "127.0.0.1:0", "--drain-timeout", "5"};
    char error[256];
    assert_int_equal(config_parse(4, (char *const *)args, no_variables, 2, &shared.config, error, sizeof error),
                     COMMAND_SERVE);
    assert_int_equal(redirects_init(&shared.redirects, shared.config.location, shared.config.count), 0);
    shared.shutdown_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    assert_true(shared.shutdown_fd >= 0);
    assert_int_equal(server_listeners_init(&shared.listeners, 2), 0); /* the loop's and the test's */

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct loop_run run = {.shared = &shared, .listen_fd = listener_bind((struct sockaddr *)&addr, sizeof addr)};
    assert_true(run.listen_fd >= 0);
    socklen_t addr_len = sizeof addr;
    assert_int_equal(getsockname(run.listen_fd, (struct sockaddr *)&addr, &addr_len), 0);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, run_loop, &run), 0);

    char got[4096] = "";
    int told = connect_to(&addr);
    assert_true(told >= 0);
    assert_int_equal(send(told, GET, sizeof GET - 1, MSG_NOSIGNAL), sizeof GET - 1);
    receive(told, got, sizeof got, 0, 5000, "\r\n\r\n");
    assert_non_null(strstr(got, "HTTP/1.1 302 Found\r\n"));
    assert_null(strstr(got, "Connection: close"));

    uint64_t one = 1;
    assert_int_equal(write(shared.shutdown_fd, &one, sizeof one), sizeof one);
    /* The loop's drain has begun once its listener refuses (at most 5 s). */
    bool refused = false;
    for (int i = 0; i < 500 && !refused; i++) {
        int probe = connect_to(&addr);
        if (probe < 0) {
            refused = errno == ECONNREFUSED;
        } else {
            close(probe);
            usleep(10000);
        }
    }
    assert_true(refused);

    got[0] = '\0';
    assert_int_equal(send(told, GET, sizeof GET - 1, MSG_NOSIGNAL), sizeof GET - 1);
    assert_int_equal(receive(told, got, sizeof got, 0, 300, NULL), 0); /* the sibling still listens */

    pthread_mutex_lock(&shared.listeners.lock); /* the sibling's listener closes */
    if (++shared.listeners.closed == shared.listeners.total) pthread_cond_broadcast(&shared.listeners.all_closed);
    pthread_mutex_unlock(&shared.listeners.lock);
    size_t len = receive(told, got, sizeof got, 0, 5000, "\r\n\r\n");
    assert_true(len > 0);
    assert_non_null(strstr(got, "HTTP/1.1 302 Found\r\n"));
    assert_non_null(strstr(got, "Connection: close\r\n\r\n"));

    close(told); /* the loop's last connection: it ends */
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(run.rc, 0);
    close(shared.shutdown_fd);
    pthread_cond_destroy(&shared.listeners.all_closed);
    pthread_mutex_destroy(&shared.listeners.lock);
    free(shared.redirects.prerendered);
    free(shared.redirects.ends);
}

size_t server_tests(struct CMUnitTest *t, size_t n)
{
    t[n++] = (struct CMUnitTest)cmocka_unit_test(drain_answers_nothing_until_every_listener_is_closed);
    return n;
}
