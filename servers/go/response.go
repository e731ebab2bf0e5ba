package main

// Responses, byte by byte (SPEC §4): every answer is appended to a connection's output
// batch from pre-rendered pieces; nothing here allocates per request.

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// persistence is what the last line of a response says about the connection (SPEC §4, §7).
type persistence uint8

const (
	keepOpen  persistence = iota // HTTP/1.1, stays open: no Connection field
	keepAlive                    // HTTP/1.0 that stays open: Connection: keep-alive
	closeConn                    // Connection: close
)

// Pre-rendering bounds: below both, every 302 head is rendered once at start-up.
const (
	prerenderMaxCount = 256
	prerenderMaxBytes = 64 * 1024
)

const redirectStart = "HTTP/1.1 302 Found\r\nLocation: "

// redirects renders the status line and Location field of the 302 for each k in 1..N.
type redirects struct {
	pieces [][]byte // the template split at every {n}
	heads  [][]byte // heads[k-1], when pre-rendered
}

func newRedirects(template []byte, count uint32) *redirects {
	r := &redirects{pieces: bytes.Split(template, []byte("{n}"))}
	perK := len(redirectStart) + len(template) + 2*7
	if count <= prerenderMaxCount && perK*int(count) <= prerenderMaxBytes {
		r.heads = make([][]byte, count)
		for k := uint32(0); k < count; k++ {
			r.heads[k] = r.render(nil, k+1)
		}
	}
	return r
}

// appendHead appends "HTTP/1.1 302 Found\r\nLocation: …\r\n" for k.
func (r *redirects) appendHead(out []byte, k uint32) []byte {
	if int(k) <= len(r.heads) {
		return append(out, r.heads[k-1]...)
	}
	return r.render(out, k)
}

func (r *redirects) render(out []byte, k uint32) []byte {
	out = append(out, redirectStart...)
	last := len(r.pieces) - 1
	for _, piece := range r.pieces[:last] {
		out = append(out, piece...)
		out = strconv.AppendUint(out, uint64(k), 10)
	}
	out = append(out, r.pieces[last]...)
	return append(out, "\r\n"...)
}

// maxResponse is the longest response in octets (the longest 302 plus every field).
func (r *redirects) maxResponse() int {
	n := len(redirectStart) + 2 + 192
	for _, piece := range r.pieces {
		n += len(piece) + 7
	}
	return n - 7
}

// dateLine is "Date: <IMF-fixdate>\r\n" (RFC 9110 §5.6.7), rendered at most once per
// second and shared by every connection.
type dateLine struct {
	mu     sync.Mutex
	second atomic.Int64
	line   atomic.Pointer[[]byte]
}

// current returns the Date line for now; it allocates only when the second changes.
func (d *dateLine) current(now time.Time) []byte {
	second := now.Unix()
	if d.second.Load() == second {
		if line := d.line.Load(); line != nil {
			return *line
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.second.Load() != second || d.line.Load() == nil {
		line := now.UTC().AppendFormat([]byte("Date: "), "Mon, 02 Jan 2006 15:04:05 GMT")
		line = append(line, "\r\n"...)
		d.line.Store(&line)
		d.second.Store(second)
	}
	return *d.line.Load()
}

// Status lines and the fields before Date of the fixed answers (SPEC §4).
var refusalLines = [...]string{
	rejectBadRequest:     "HTTP/1.1 400 Bad Request\r\n",
	rejectTimeout:        "HTTP/1.1 408 Request Timeout\r\n",
	rejectURITooLong:     "HTTP/1.1 414 URI Too Long\r\n",
	rejectFieldsTooLarge: "HTTP/1.1 431 Request Header Fields Too Large\r\n",
	rejectNotImplemented: "HTTP/1.1 501 Not Implemented\r\n",
	rejectVersion:        "HTTP/1.1 505 HTTP Version Not Supported\r\n",
}

const (
	healthStart   = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n"
	notFoundStart = "HTTP/1.1 404 Not Found\r\n"
	notAllowed    = "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n"
	seededCache   = "Cache-Control: public, max-age=86400\r\n"
	randomCache   = "Cache-Control: no-store\r\n"
	healthBody    = "ok\n"
)

// tails[hasBody][persistence] ends every response after its Date line.
var tails = [2][3]string{
	{"Content-Length: 0\r\n\r\n", "Content-Length: 0\r\nConnection: keep-alive\r\n\r\n", "Content-Length: 0\r\nConnection: close\r\n\r\n"},
	{"Content-Length: 3\r\n\r\n", "Content-Length: 3\r\nConnection: keep-alive\r\n\r\n", "Content-Length: 3\r\nConnection: close\r\n\r\n"},
}

// answer is one response to append: a route's, or a refusal.
type answer struct {
	route  route
	k      uint32 // routeRedirect: the image
	seeded bool   // routeRedirect: the k came from a seed
	reject reject // not rejectNone: a refusal (always closes)
}

// appendResponse appends the response a to out; headMethod drops the body (RFC 9110 §9.3.2).
func appendResponse(out []byte, a answer, headMethod bool, p persistence, r *redirects, date []byte) []byte {
	body := false
	switch {
	case a.reject != rejectNone:
		out = append(out, refusalLines[a.reject]...)
	case a.route == routeRedirect:
		out = r.appendHead(out, a.k)
		if a.seeded {
			out = append(out, seededCache...)
		} else {
			out = append(out, randomCache...)
		}
	case a.route == routeHealth:
		out = append(out, healthStart...)
		body = true
	case a.route == routeNotFound:
		out = append(out, notFoundStart...)
	default:
		out = append(out, notAllowed...)
	}
	out = append(out, date...)
	if body {
		out = append(out, tails[1][p]...)
		if !headMethod {
			out = append(out, healthBody...)
		}
		return out
	}
	return append(out, tails[0][p]...)
}
