package main

import (
	"testing"
	"time"
)

const dateText = "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\n"

var midnight = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// TestResponsesAreByteExact pins every response form of SPEC §4.
func TestResponsesAreByteExact(t *testing.T) {
	r := newRedirects([]byte("https://avatar.example.org/Renard-{n}.png"), 21)
	var d dateLine
	date := d.current(midnight)
	cases := []struct {
		name string
		a    answer
		head bool
		p    persistence
		want string
	}{
		{"random redirect", answer{route: routeRedirect, k: 7}, false, keepOpen,
			"HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-7.png\r\nCache-Control: no-store\r\n" + dateText + "Content-Length: 0\r\n\r\n"},
		{"seeded redirect", answer{route: routeRedirect, k: 21, seeded: true}, false, keepOpen,
			"HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-21.png\r\nCache-Control: public, max-age=86400\r\n" + dateText + "Content-Length: 0\r\n\r\n"},
		{"health", answer{route: routeHealth}, false, keepOpen,
			"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n" + dateText + "Content-Length: 3\r\n\r\nok\n"},
		{"HEAD health keeps the length", answer{route: routeHealth}, true, keepOpen,
			"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n" + dateText + "Content-Length: 3\r\n\r\n"},
		{"405 carries Allow", answer{route: routeMethodNotAllowed}, false, keepOpen,
			"HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n" + dateText + "Content-Length: 0\r\n\r\n"},
		{"404 on HTTP/1.0 keep-alive", answer{route: routeNotFound}, false, keepAlive,
			"HTTP/1.1 404 Not Found\r\n" + dateText + "Content-Length: 0\r\nConnection: keep-alive\r\n\r\n"},
		{"431 closes", answer{reject: rejectFieldsTooLarge}, false, closeConn,
			"HTTP/1.1 431 Request Header Fields Too Large\r\n" + dateText + "Content-Length: 0\r\nConnection: close\r\n\r\n"},
		{"408", answer{reject: rejectTimeout}, false, closeConn,
			"HTTP/1.1 408 Request Timeout\r\n" + dateText + "Content-Length: 0\r\nConnection: close\r\n\r\n"},
	}
	for _, tc := range cases {
		if got := string(appendResponse(nil, tc.a, tc.head, tc.p, r, date)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestLargeCountRendersLikePrerendered checks that k beyond the pre-rendered table is
// rendered the same way, with every {n} replaced.
func TestLargeCountRendersLikePrerendered(t *testing.T) {
	small, large := newRedirects([]byte("/{n}/{n}x{n}"), 21), newRedirects([]byte("/{n}/{n}x{n}"), 1000000)
	if small.heads == nil || large.heads != nil {
		t.Fatal("pre-rendering bounds not applied")
	}
	if a, b := string(small.appendHead(nil, 5)), string(large.appendHead(nil, 5)); a != b || a != "HTTP/1.1 302 Found\r\nLocation: /5/5x5\r\n" {
		t.Fatalf("%q vs %q", a, b)
	}
	if got := string(large.appendHead(nil, 1000000)); got != "HTTP/1.1 302 Found\r\nLocation: /1000000/1000000x1000000\r\n" {
		t.Fatalf("got %q", got)
	}
}

// TestDateLineChangesOnlyWithTheSecond checks the once-per-second rendering.
func TestDateLineChangesOnlyWithTheSecond(t *testing.T) {
	var d dateLine
	first := d.current(midnight)
	if string(d.current(midnight.Add(999*time.Millisecond))) != dateText || string(first) != dateText {
		t.Fatalf("got %q", first)
	}
	if got := string(d.current(midnight.Add(time.Second))); got != "Date: Sun, 22 Nov 2026 00:00:01 GMT\r\n" {
		t.Fatalf("got %q", got)
	}
}

// parseAndAnswer is the request path without the socket, as one call: input parsed and
// its answer appended to a buffer reused from call to call (k 7 when it has no seed).
func parseAndAnswer(input string) func() {
	r := newRedirects([]byte("https://avatar.example.org/Renard-{n}.png"), 21)
	var d dateLine
	head := []byte(input)
	out := make([]byte, 0, 4096)
	return func() {
		p := parseHead(head)
		a := answer{route: p.req.route, k: 7}
		if p.req.seeded {
			a.k, a.seeded = kForHash(p.req.seedHash, 21), true
		}
		out = appendResponse(out[:0], a, false, keepOpen, r, d.current(midnight))
	}
}

// TestParseAndAnswerDoNotAllocate measures the request path without the socket.
func TestParseAndAnswerDoNotAllocate(t *testing.T) {
	serve := parseAndAnswer("GET /?seed=renard HTTP/1.1\r\nHost: renard.test\r\nUser-Agent: x\r\nAccept: */*\r\n\r\n")
	if allocs := testing.AllocsPerRun(1000, serve); allocs != 0 {
		t.Fatalf("%v allocations per request, want 0", allocs)
	}
}

func BenchmarkParseAndAnswer(b *testing.B) {
	serve := parseAndAnswer("GET / HTTP/1.1\r\nHost: renard.test\r\nUser-Agent: wrk\r\n\r\n")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		serve()
	}
}
