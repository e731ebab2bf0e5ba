package main

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// closedWithoutResponse waits up to a second for c to be closed with nothing sent.
func closedWithoutResponse(c net.Conn) bool {
	got, closed := readAll(c, time.Second)
	return closed && got == ""
}

// stillOpen reports whether c is still served: it completes a request and gets an answer.
func stillOpen(c net.Conn, rest string) bool {
	c.Write([]byte(rest))
	got, _ := readAll(c, 300*time.Millisecond)
	return strings.HasPrefix(got, "HTTP/1.1 ")
}

// TestEvictionOrder fills the cap with a lingering close, two partial heads and an idle
// connection, then opens one connection after another: each evicts, in the order of
// SPEC §7.5, the lingering close, the earliest partial head, the later one, the idle one.
func TestEvictionOrder(t *testing.T) {
	cfg := testConfig()
	cfg.maxConnections = 4
	_, addr := start(t, cfg)
	idle := dial(t, addr)
	time.Sleep(50 * time.Millisecond)
	early := dial(t, addr)
	early.Write([]byte("GET / HTTP/1.1\r\n"))
	time.Sleep(50 * time.Millisecond)
	late := dial(t, addr)
	late.Write([]byte("GET / HTTP/1.1\r\n"))
	lingering := dial(t, addr)
	lingering.Write([]byte("BAD\x01\r\n\r\n"))
	if got, _ := readAll(lingering, 300*time.Millisecond); !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") {
		t.Fatalf("no 400: %q", got)
	}
	order := []struct {
		name string
		conn net.Conn
	}{{"lingering", lingering}, {"early partial", early}, {"late partial", late}, {"idle", idle}}
	for i, victim := range order {
		newcomer := dial(t, addr)
		time.Sleep(50 * time.Millisecond)
		if !closedWithoutResponse(victim.conn) {
			t.Fatalf("newcomer %d: the %s connection was not evicted", i, victim.name)
		}
		if !stillOpen(newcomer, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n") {
			t.Fatalf("newcomer %d not served", i)
		}
	}
}

// TestNewcomerClosedWhenNothingCanBeEvicted: at the cap, a connection with response
// octets not yet written is never chosen (SPEC §7.5); the newcomer is closed at once.
// The busy connection is a client that pipelines far more than it reads.
func TestNewcomerClosedWhenNothingCanBeEvicted(t *testing.T) {
	cfg := testConfig()
	cfg.maxConnections = 1
	_, addr := start(t, cfg)
	busy := dial(t, addr)
	busy.(*net.TCPConn).SetReadBuffer(4096)
	// Far more answers than the socket buffers hold: the server stays busy writing. The
	// write runs beside the test, bounded by its deadline, since the server stops reading.
	busy.SetWriteDeadline(time.Now().Add(3 * time.Second))
	go busy.Write([]byte(strings.Repeat("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", 40000)))
	time.Sleep(300 * time.Millisecond)
	newcomer := dial(t, addr)
	if !closedWithoutResponse(newcomer) {
		t.Fatal("newcomer not closed")
	}
	if got, _ := readAll(busy, 200*time.Millisecond); !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
		t.Fatalf("the busy connection lost its answers: %.40q", got)
	}
}

// TestDrainAnswersWithCloseThenCloses follows SPEC §7.6: the listener closes at once; an
// idle connection that sends a request in the window is answered with Connection: close;
// a partial head is closed without a response at the window's end; all within the window
// plus 1 s.
func TestDrainAnswersWithCloseThenCloses(t *testing.T) {
	cfg := testConfig()
	cfg.drainTimeout = 500 * time.Millisecond
	s, addr := start(t, cfg)
	idle := dial(t, addr)
	partial := dial(t, addr)
	partial.Write([]byte("GET / HTTP/1.1\r\nHo"))
	time.Sleep(50 * time.Millisecond)
	began := time.Now()
	end := s.drain()
	if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		c.Close()
		t.Fatal("the listener still accepts")
	}
	idle.Write([]byte("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"))
	got, closed := readAll(idle, time.Second)
	if !closed || !strings.HasSuffix(got, "Content-Length: 3\r\nConnection: close\r\n\r\nok\n") {
		t.Fatalf("idle: %q closed %v", got, closed)
	}
	if !closedWithoutResponse(partial) {
		t.Fatal("partial head answered or kept")
	}
	s.wait(end.Add(900 * time.Millisecond))
	if elapsed := time.Since(began); elapsed > cfg.drainTimeout+time.Second {
		t.Fatalf("drain took %v", elapsed)
	}
}

// closeWatch is a listener that records whether the server was draining when it closed.
type closeWatch struct {
	*net.TCPListener
	s               *server
	drainingAtClose bool
}

func (l *closeWatch) Close() error {
	l.drainingAtClose = l.s.draining.Load()
	return l.TCPListener.Close()
}

// TestDrainServesTheQueueAfterClosingTheListener (SPEC §7.6): connections whose handshake
// the kernel completed but nobody accepted (no accept goroutine runs here) are answered
// with close, not reset by the listener's close; and the listener closes before draining
// begins, so a client that reconnects on being told to close is refused.
func TestDrainServesTheQueueAfterClosingTheListener(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("takeQueued takes the queue on Linux only")
	}
	cfg := testConfig()
	cfg.drainTimeout = 500 * time.Millisecond
	ln, err := net.Listen("tcp", cfg.listen.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	watch := &closeWatch{TCPListener: ln.(*net.TCPListener)}
	s := newServer(cfg, watch)
	watch.s = s
	queued := make([]net.Conn, 3)
	for i := range queued {
		queued[i] = dial(t, ln.Addr().String())
		queued[i].Write([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
	}
	time.Sleep(50 * time.Millisecond)
	end := s.drain()
	if watch.drainingAtClose {
		t.Error("the listener closed after draining began: a client told to close could be accepted")
	}
	for i, c := range queued {
		got, closed := readAll(c, time.Second)
		if !closed || !strings.HasPrefix(got, "HTTP/1.1 302 Found\r\n") || !strings.HasSuffix(got, "Connection: close\r\n\r\n") {
			t.Errorf("queued connection %d: %q closed %v", i, got, closed)
		}
	}
	s.wait(end.Add(900 * time.Millisecond))
}

// TestDrainWithZeroWindowClosesIdleAtOnce: --drain-timeout 0.
func TestDrainWithZeroWindowClosesIdleAtOnce(t *testing.T) {
	cfg := testConfig()
	cfg.drainTimeout = 0
	s, addr := start(t, cfg)
	idle := dial(t, addr)
	time.Sleep(50 * time.Millisecond)
	s.drain()
	if !closedWithoutResponse(idle) {
		t.Fatal("idle connection kept")
	}
}

// TestHeaderDeadlineIsAbsolute: a head dripped octet by octet gets 408 at the header
// deadline counted from the accept (SPEC §7.5), not later.
func TestHeaderDeadlineIsAbsolute(t *testing.T) {
	cfg := testConfig()
	cfg.headerTimeout = 500 * time.Millisecond
	_, addr := start(t, cfg)
	began := time.Now() // before the dial: the server's clock may start before it returns
	c := dial(t, addr)
	for _, b := range []byte("GET / HTTP/1.1\r\nX-A: aaaaaaaa") {
		if _, err := c.Write([]byte{b}); err != nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	got, closed := readAll(c, 2*time.Second)
	if !closed || !strings.HasPrefix(got, "HTTP/1.1 408 Request Timeout\r\n") {
		t.Fatalf("got %q", got)
	}
	if elapsed := time.Since(began); elapsed < 500*time.Millisecond || elapsed > 1500*time.Millisecond {
		t.Fatalf("408 after %v", elapsed)
	}
}

// TestRoundTripAllocations measures allocations per keep-alive request over loopback,
// server and a raw client together.
func TestRoundTripAllocations(t *testing.T) {
	_, addr := start(t, testConfig())
	c := dial(t, addr)
	request := []byte("GET /?seed=renard HTTP/1.1\r\nHost: renard.test\r\n\r\n")
	buf := make([]byte, 4096)
	roundTrip := func() {
		c.Write(request)
		c.Read(buf)
	}
	roundTrip()
	allocs := testing.AllocsPerRun(2000, roundTrip)
	t.Logf("%.2f allocations per request (server and client)", allocs)
	if allocs != 0 {
		t.Fatalf("%.2f allocations per request", allocs)
	}
}

// TestUnreadOctetsSeesTheReceiveQueue: the eviction's look at octets not yet read.
func TestUnreadOctetsSeesTheReceiveQueue(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client := dial(t, ln.Addr().String())
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	raw, _ := server.(*net.TCPConn).SyscallConn()
	if n := unreadOctets(raw); n != 0 {
		t.Fatalf("%d unread octets before any was sent", n)
	}
	client.Write([]byte("GET / HTTP/1.1\r\n"))
	deadline := time.Now().Add(time.Second)
	for unreadOctets(raw) != 16 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := unreadOctets(raw); n != 16 {
		t.Fatalf("%d unread octets, want 16", n)
	}
}
