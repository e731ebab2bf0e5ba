/* SPEC §7.5: the listener defers the accept until a connection's first octets arrive, and
 * hands over sockets that already have TCP_NODELAY. Loopback only; every wait is bounded. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "cases.h"
#include "listener.h"

/* A listener on 127.0.0.1 at a port the kernel picks, written to *addr. */
static int bind_loopback(struct sockaddr_in *addr)
{
    *addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = listener_bind((struct sockaddr *)addr, sizeof *addr);
    assert_true(fd >= 0);
    socklen_t len = sizeof *addr;
    assert_int_equal(getsockname(fd, (struct sockaddr *)addr, &len), 0);
    return fd;
}

static int connect_to(const struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (const struct sockaddr *)addr, sizeof *addr), 0);
    return fd;
}

static int int_option(int fd, int level, int name)
{
    int value = -1;
    socklen_t len = sizeof value;
    assert_int_equal(getsockopt(fd, level, name, &value, &len), 0);
    return value;
}

static void listener_holds_defer_accept_and_nodelay(void **s)
{
    struct sockaddr_in addr;
    int listener = bind_loopback(&addr);
    /* Linux reports the deferral rounded to its SYN-ACK retransmissions: 1 s stays 1 s. */
    assert_int_equal(int_option(listener, IPPROTO_TCP, TCP_DEFER_ACCEPT), DEFER_ACCEPT_S);
    assert_int_not_equal(int_option(listener, IPPROTO_TCP, TCP_NODELAY), 0);
    close(listener);
}

/* A client that sends nothing is held by the kernel (the listener is not readable, accept
 * finds nothing); once it sends an octet it is handed over with the octet there to read,
 * and with TCP_NODELAY already set. */
static void silent_client_is_accepted_only_once_it_sends(void **s)
{
    struct sockaddr_in addr;
    int listener = bind_loopback(&addr);
    int client = connect_to(&addr);
    /* connect returned: the handshake is done. Without the deferral the connection would
     * be acceptable now; 300 ms is well inside the 1 s deferral. */
    struct pollfd p = {.fd = listener, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 300), 0);
    assert_int_equal(accept4(listener, NULL, NULL, SOCK_CLOEXEC), -1);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    assert_int_equal(write(client, "G", 1), 1);
    assert_int_equal(poll(&p, 1, 5000), 1);
    int accepted = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    assert_true(accepted >= 0);
    char octet = 0;
    assert_int_equal(recv(accepted, &octet, 1, MSG_DONTWAIT), 1);
    assert_int_equal(octet, 'G');
    assert_int_not_equal(int_option(accepted, IPPROTO_TCP, TCP_NODELAY), 0);
    close(accepted);
    close(client);
    close(listener);
}

size_t listener_tests(struct CMUnitTest *t, size_t n)
{
    const struct CMUnitTest more[] = {
        cmocka_unit_test(listener_holds_defer_accept_and_nodelay),
        cmocka_unit_test(silent_client_is_accepted_only_once_it_sends),
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) t[n++] = more[i];
    return n;
}
