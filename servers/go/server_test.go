package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testConfig is the configuration the tests serve with (the runner's short timeouts).
func testConfig() config {
	return config{
		listen: netip.MustParseAddrPort("127.0.0.1:0"), count: 21,
		location: []byte("https://avatar.example.org/Renard-{n}.png"), threads: 2,
		headerTimeout: 2 * time.Second, idleTimeout: 3 * time.Second,
		maxConnections: 10000, drainTimeout: time.Second,
	}
}

// start serves cfg on a loopback port until the test ends.
func start(t *testing.T, cfg config) (*server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", cfg.listen.String())
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(cfg, ln)
	go s.serve()
	t.Cleanup(func() { ln.Close() })
	return s, ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readAll reads until the server closes (true) or is quiet for quiet (false).
func readAll(c net.Conn, quiet time.Duration) (string, bool) {
	var got []byte
	buf := make([]byte, 4096)
	for {
		c.SetReadDeadline(time.Now().Add(quiet))
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return string(got), !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
}

// vectorCase is the part of a spec/vectors/http case these tests replay.
type vectorCase struct {
	Name      string
	Send      []json.RawMessage
	Responses []struct {
		Status  json.RawMessage
		Head    bool
		Headers map[string]json.RawMessage
		Absent  []string
		Body    *string
		Times   int
	}
	Then     string
	Slow     bool
	Wait     json.RawMessage
	Requires map[string]any
}

// octets turns the send segments into the octets sent; false when a segment waits for
// a server timeout (left to the conformance runner).
func (vc vectorCase) octets() ([]string, bool) {
	var writes []string
	var current strings.Builder
	for _, raw := range vc.Send {
		var text string
		if json.Unmarshal(raw, &text) == nil {
			for _, r := range text {
				current.WriteByte(byte(r)) // latin-1
			}
			continue
		}
		var seg struct {
			Hex    *string
			Repeat *string
			Times  int
			Pause  *string
			PauseM *int `json:"pause_ms"`
		}
		json.Unmarshal(raw, &seg)
		switch {
		case seg.Hex != nil:
			var b []byte
			for i := 0; i+1 < len(*seg.Hex); i += 2 {
				var v byte
				for _, h := range (*seg.Hex)[i : i+2] {
					d, _ := unhex(byte(h))
					v = v<<4 | d
				}
				b = append(b, v)
			}
			current.Write(b)
		case seg.Repeat != nil:
			for n := 0; n < seg.Times; n++ {
				for _, r := range *seg.Repeat {
					current.WriteByte(byte(r))
				}
			}
		case seg.PauseM != nil && *seg.PauseM <= 500:
			writes = append(writes, current.String())
			current.Reset()
		default:
			return nil, false
		}
	}
	return append(writes, current.String()), true
}

// TestVectorsOverTheWire replays every spec/vectors/http case that needs no server
// timeout, reading the answers with net/http's response parser: status, the exact
// fields the case names, absent fields, body, and whether the connection stays open.
func TestVectorsOverTheWire(t *testing.T) {
	_, addr := start(t, testConfig())
	files, _ := filepath.Glob("../../spec/vectors/http/*.json")
	if len(files) == 0 {
		t.Fatal("no vectors")
	}
	replayed := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var group struct{ Cases []vectorCase }
		if err := json.Unmarshal(text, &group); err != nil {
			t.Fatal(file, err)
		}
		for _, vc := range group.Cases {
			writes, ok := vc.octets()
			if !ok || vc.Slow || len(vc.Requires) > 0 || (len(vc.Wait) > 0 && vc.Wait[0] == '"') {
				continue
			}
			replayed++
			vc, writes := vc, writes // each parallel subtest its own case
			t.Run(vc.Name, func(t *testing.T) { replay(t, addr, vc, writes) })
		}
	}
	t.Logf("%d cases replayed", replayed)
}

func replay(t *testing.T, addr string, vc vectorCase, writes []string) {
	t.Parallel()
	c := dial(t, addr)
	for i, w := range writes {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		c.Write([]byte(w))
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	var expected []int // indices into vc.Responses, "times" expanded
	for i, want := range vc.Responses {
		for n := 0; n == 0 || n < want.Times; n++ {
			expected = append(expected, i)
		}
	}
	for i, index := range expected {
		want := vc.Responses[index]
		method := http.MethodGet
		if want.Head {
			method = http.MethodHead
		}
		resp, err := http.ReadResponse(r, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		var status int
		if json.Unmarshal(want.Status, &status) != nil {
			var statuses []int
			json.Unmarshal(want.Status, &statuses)
			status = statuses[0]
		}
		if resp.StatusCode != status {
			t.Fatalf("response %d: status %d, want %d", i, resp.StatusCode, status)
		}
		for name, raw := range want.Headers {
			var value string
			if json.Unmarshal(raw, &value) != nil || strings.HasPrefix(value, "re:") || strings.HasPrefix(value, "{") {
				continue
			}
			if name == "connection" && value == "close" {
				// net/http takes the field out of the header into resp.Close.
				if !resp.Close {
					t.Errorf("response %d: no Connection: close", i)
				}
			} else {
				if got := resp.Header.Values(name); len(got) != 1 || got[0] != value {
					t.Errorf("response %d: %s = %q, want %q", i, name, got, value)
				}
			}
		}
		for _, name := range want.Absent {
			if resp.Header.Get(name) != "" {
				t.Errorf("response %d: %s present", i, name)
			}
		}
		if want.Body != nil && string(body) != *want.Body {
			t.Errorf("response %d: body %q, want %q", i, body, *want.Body)
		}
	}
	switch vc.Then {
	case "close":
		rest, closed := readAll(c, 3*time.Second)
		if !closed || rest != "" {
			t.Fatalf("then close: got %q, closed %v", rest, closed)
		}
	case "open":
		c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: renard.test\r\n\r\n"))
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("then open: %v", err)
		}
	}
}

// TestNetHTTPClientReusesOneConnection: a stock Go client reads renard's answers
// and keeps one connection for several requests.
func TestNetHTTPClientReusesOneConnection(t *testing.T) {
	_, addr := start(t, testConfig())
	var dials atomic.Int32
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, a)
		}},
	}
	for n := 0; n < 3; n++ {
		resp, err := client.Get("http://" + addr + "/?seed=renard")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://avatar.example.org/Renard-7.png" ||
			resp.Header.Get("Cache-Control") != "public, max-age=86400" {
			t.Fatalf("%d %v", resp.StatusCode, resp.Header)
		}
	}
	if dials.Load() != 1 {
		t.Fatalf("%d connections for 3 requests", dials.Load())
	}
}
