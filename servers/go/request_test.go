package main

import (
	"strings"
	"testing"
)

const host = "Host: renard.test\r\n"

// parseHead parses input as one read, from scratch.
func parseHead(input []byte) parsed { return parse(input, &progress{}) }

// parseDripped parses input as it arrives one octet per read, resuming as a connection
// does (a partial head held from its first octet, the empty lines before it dropped).
func parseDripped(input []byte) parsed {
	var p progress
	var held []byte
	result := parsed{outcome: needMore}
	for _, octet := range input {
		held = append(held, octet)
		if result = parse(held, &p); result.outcome != needMore {
			return result
		}
		held = held[result.emptyLines:]
	}
	return result
}

// parsers are the two ways a head arrives: in one read, and one octet per read.
var parsers = map[string]func([]byte) parsed{"whole": parseHead, "dripped": parseDripped}

// TestParseDecidesEveryRule walks SPEC §5 rule by rule, complete heads and heads cut
// short (decided as soon as the octets received decide them), each in one read and one
// octet per read.
func TestParseDecidesEveryRule(t *testing.T) {
	long := strings.Repeat("a", maxRequestLine)
	cases := []struct {
		name  string
		input string
		want  outcome
		r     reject
		route route
	}{
		{"origin form redirects", "GET / HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeRedirect},
		{"health", "HEAD /healthz HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeHealth},
		{"other path", "GET /index.html HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeNotFound},
		{"encoded slash is not root", "GET /%2F HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeNotFound},
		{"lower-case method", "get / HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeMethodNotAllowed},
		{"post on health", "POST /healthz HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeMethodNotAllowed},
		{"leading empty lines", "\r\n\n\r\nGET / HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeRedirect},
		{"bare LF line ends", "GET / HTTP/1.1\nHost: a\n\n", complete, rejectNone, routeRedirect},
		{"absolute form", "GET HTTP://h.test?seed=x HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeRedirect},
		{"absolute form https path", "GET https://h.test/healthz HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeHealth},
		{"absolute form without authority", "GET http:///x HTTP/1.1\r\n" + host + "\r\n", refused, rejectBadRequest, 0},
		{"asterisk form", "OPTIONS * HTTP/1.1\r\n" + host + "\r\n", refused, rejectBadRequest, 0},
		{"authority form", "CONNECT h.test:80 HTTP/1.1\r\n" + host + "\r\n", refused, rejectBadRequest, 0},
		{"http/1.0 without host", "GET / HTTP/1.0\r\n\r\n", complete, rejectNone, routeRedirect},
		{"partial request line", "GET / HT", needMore, rejectNone, 0},
		{"partial field", "GET / HTTP/1.1\r\nHost: a", needMore, rejectNone, 0},
		{"lone CR at the end waits", "GET / HTTP/1.1\r", needMore, rejectNone, 0},
		{"bare CR", "GET / HTTP/1.1\r\nHost: a\r\rX", refused, rejectBadRequest, 0},
		{"bare CR in a partial head", "GET /\rx", refused, rejectBadRequest, 0},
		{"method not a token", "G(T / HTTP/1.1\r\n" + host + "\r\n", refused, rejectBadRequest, 0},
		{"bad method decided early", "G\x01", refused, rejectBadRequest, 0},
		{"two spaces", "GET  / HTTP/1.1\r\n" + host + "\r\n", refused, rejectBadRequest, 0},
		{"non-ASCII target", "GET /\xc3\xa9 HTTP/1.1\r\n" + host + "\r\n", refused, rejectBadRequest, 0},
		{"control octet in target", "GET /\x01 HTTP/1.1\r\n", refused, rejectBadRequest, 0},
		{"hash belongs to the target", "GET /#x HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeNotFound},
		{"request line of 8192 octets", "GET /" + long[:8192-14] + " HTTP/1.1\r\n" + host + "\r\n", complete, rejectNone, routeNotFound},
		{"request line of 8193 octets", "GET /" + long[:8193-14] + " HTTP/1.1\r\n" + host + "\r\n", refused, rejectURITooLong, 0},
		{"unended request line past the limit", "GET /" + long, refused, rejectURITooLong, 0},
		{"HTTP/2.0", "GET / HTTP/2.0\r\n" + host + "\r\n", refused, rejectVersion, 0},
		{"HTTP/1.2", "GET / HTTP/1.2\r\n\r\n", refused, rejectVersion, 0},
		{"preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", refused, rejectVersion, 0},
		{"HTTP/1", "GET / HTTP/1\r\n\r\n", refused, rejectBadRequest, 0},
		{"HTTP/01.1", "GET / HTTP/01.1\r\n\r\n", refused, rejectBadRequest, 0},
		{"lower-case version", "GET / http/1.1\r\n\r\n", refused, rejectBadRequest, 0},
		{"no version", "GET /\r\n\r\n", refused, rejectBadRequest, 0},
		{"HTTP/2.0 with a bad target", "GET /\xff HTTP/2.0\r\n\r\n", refused, rejectBadRequest, 0},
		{"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", refused, rejectBadRequest, 0},
		{"obs-fold", "GET / HTTP/1.1\r\n" + host + "X: a\r\n b\r\n\r\n", refused, rejectBadRequest, 0},
		{"empty field name", "GET / HTTP/1.1\r\n" + host + ": a\r\n\r\n", refused, rejectBadRequest, 0},
		{"NUL in value", "GET / HTTP/1.1\r\n" + host + "X: a\x00b\r\n\r\n", refused, rejectBadRequest, 0},
		{"DEL in value", "GET / HTTP/1.1\r\n" + host + "X: a\x7f\r\n\r\n", refused, rejectBadRequest, 0},
		{"obs-text in value", "GET / HTTP/1.1\r\n" + host + "X: caf\xe9\t!\r\n\r\n", complete, rejectNone, routeRedirect},
		{"101 field lines", "GET / HTTP/1.1\r\n" + host + strings.Repeat("X: 1\r\n", 100) + "\r\n", refused, rejectFieldsTooLarge, 0},
		{"100 field lines", "GET / HTTP/1.1\r\n" + host + strings.Repeat("X: 1\r\n", 99) + "\r\n", complete, rejectNone, routeRedirect},
		{"field section past 16384", "GET / HTTP/1.1\r\n" + host + "X: " + strings.Repeat("a", 16384) + "\r\n\r\n", refused, rejectFieldsTooLarge, 0},
		{"syntax before size", "GET / HTTP/1.1\r\nX : 1\r\n" + strings.Repeat("X: 1\r\n", 101), refused, rejectBadRequest, 0},
		{"no host on 1.1", "GET / HTTP/1.1\r\n\r\n", refused, rejectBadRequest, 0},
		{"two hosts", "GET / HTTP/1.1\r\n" + host + host + "\r\n", refused, rejectBadRequest, 0},
		{"two hosts on 1.0", "GET / HTTP/1.0\r\n" + host + host + "\r\n", refused, rejectBadRequest, 0},
		{"host with port", "GET / HTTP/1.1\r\nHost: a.test:8080\r\n\r\n", complete, rejectNone, routeRedirect},
		{"host IPv6 literal", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", complete, rejectNone, routeRedirect},
		{"empty host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", complete, rejectNone, routeRedirect},
		{"host with path", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", refused, rejectBadRequest, 0},
		{"host with user", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", refused, rejectBadRequest, 0},
		{"host port not digits", "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n", refused, rejectBadRequest, 0},
		{"percent in IP literal", "GET / HTTP/1.1\r\nHost: [fe80::1%25e]\r\n\r\n", refused, rejectBadRequest, 0},
		{"content-length list", "GET / HTTP/1.1\r\n" + host + "Content-Length: 5, 5\r\n\r\n", refused, rejectBadRequest, 0},
		{"content-length sign", "GET / HTTP/1.1\r\n" + host + "Content-Length: +1\r\n\r\n", refused, rejectBadRequest, 0},
		{"content-length 19 digits", "GET / HTTP/1.1\r\n" + host + "Content-Length: 1000000000000000000\r\n\r\n", refused, rejectBadRequest, 0},
		{"two content-lengths", "GET / HTTP/1.1\r\n" + host + "Content-Length: 1\r\nContent-Length: 1\r\n\r\n", refused, rejectBadRequest, 0},
		{"length and chunked", "POST / HTTP/1.1\r\n" + host + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", refused, rejectBadRequest, 0},
		{"chunked on 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", refused, rejectBadRequest, 0},
		{"gzip, chunked", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n", refused, rejectNotImplemented, 0},
		{"chunked, gzip", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked, gzip\r\n\r\n", refused, rejectBadRequest, 0},
		{"empty coding", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: , chunked\r\n\r\n", refused, rejectBadRequest, 0},
		{"two coding lines", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", refused, rejectBadRequest, 0},
		{"chunked alone", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: Chunked\r\n\r\n", complete, rejectNone, routeMethodNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for how, parse := range parsers {
				p := parse([]byte(tc.input))
				if p.outcome != tc.want || p.reject != tc.r || (tc.want == complete && p.req.route != tc.route) {
					t.Fatalf("%s parse(%.80q) = outcome %d reject %d route %d; want %d %d %d",
						how, tc.input, p.outcome, p.reject, p.req.route, tc.want, tc.r, tc.route)
				}
			}
		})
	}
}

// TestParseReadsPersistenceAndFraming checks the fields that decide what follows the
// answer (SPEC §6, §7.1).
func TestParseReadsPersistenceAndFraming(t *testing.T) {
	cases := []struct {
		name                         string
		input                        string
		keepAlive, http10, expect100 bool
		length                       uint64
	}{
		{"1.1 persists", "GET / HTTP/1.1\r\n" + host + "\r\n", true, false, false, 0},
		{"1.1 close among tokens", "GET / HTTP/1.1\r\n" + host + "Connection: foo, Close\r\n\r\n", false, false, false, 0},
		{"1.0 closes", "GET / HTTP/1.0\r\n\r\n", false, true, false, 0},
		{"1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true, true, false, 0},
		{"body length", "POST / HTTP/1.1\r\n" + host + "Content-Length: 12\r\n\r\n", true, false, false, 12},
		{"expect with body", "POST / HTTP/1.1\r\n" + host + "Expect: 100-Continue\r\nContent-Length: 1\r\n\r\n", true, false, true, 1},
		{"expect without body", "POST / HTTP/1.1\r\n" + host + "Expect: 100-continue\r\n\r\n", true, false, false, 0},
		{"expect on 1.0", "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n", false, true, false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := parseHead([]byte(tc.input))
			r := p.req
			if p.outcome != complete || r.keepAlive != tc.keepAlive || r.http10 != tc.http10 ||
				r.expectContinue != tc.expect100 || r.contentLength != tc.length || r.headLen != len(tc.input) {
				t.Fatalf("parseHead(%q) = %+v", tc.input, p)
			}
		})
	}
}

// TestVersionWaitsForItsLineEnd: a version is read octet by octet and decided at its
// line end, so the answer does not depend on where the reads split it.
func TestVersionWaitsForItsLineEnd(t *testing.T) {
	for input, want := range map[string]reject{
		"GET / HTTP/1.":       rejectNone,
		"GET / HTTP/2":        rejectNone,
		"GET / HTTP/2.0":      rejectNone,
		"GET / HTTP/2.0\r":    rejectNone,
		"GET / HTTP/2.0\r\n":  rejectVersion,
		"GET / HTTP/2.0\rX":   rejectBadRequest, // rule 2 before rule 4
		"GET / HTTP/2.0 ":     rejectBadRequest,
		"GET / HTTP/2.x":      rejectBadRequest,
		"GET / XTTP":          rejectBadRequest,
		"GET / HTTP/1.10\r\n": rejectBadRequest,
		"GET / HTTP/1.1\r\n":  rejectNone,
	} {
		if got := parseHead([]byte(input)).reject; got != want {
			t.Errorf("parseHead(%q).reject = %d, want %d", input, got, want)
		}
	}
}

// TestFirstDecidingOctetWins: the checks of rules 2–6 apply in octet order, whatever
// arrives in one read, and whatever the reads' boundaries.
func TestFirstDecidingOctetWins(t *testing.T) {
	cases := []struct {
		name, input string
		want        reject
	}{
		{"bad method octet before the line length", "G\x01T /" + strings.Repeat("a", 9000) + " HTTP/1.1\r\n" + host + "\r\n", rejectBadRequest},
		{"line length before a later bad octet", "GET /" + strings.Repeat("a", 9000) + "\x01 HTTP/1.1\r\n", rejectURITooLong},
		{"section size before a later bad octet", "GET / HTTP/1.1\r\n" + host + "X-Pad: " + strings.Repeat("a", 16400) + "\x01\r\n\r\n", rejectFieldsTooLarge},
		{"bad octet before the section size", "GET / HTTP/1.1\r\n" + host + "X-Pad: \x01" + strings.Repeat("a", 16400) + "\r\n\r\n", rejectBadRequest},
		{"bare CR before the version rule", "GET / HTTP/2.0\rX\r\n" + host + "\r\n", rejectBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for how, parse := range parsers {
				if got := parse([]byte(tc.input)).reject; got != tc.want {
					t.Errorf("%s: reject %d, want %d", how, got, tc.want)
				}
			}
		})
	}
}

// TestParseNeverPanics feeds every prefix of hostile heads (a cheap stand-in for a fuzzer).
func TestParseNeverPanics(t *testing.T) {
	heads := []string{
		"\r\n\r\nGET http://a?seed=%zz HTTP/1.1\r\nHost: [::1]:1\r\nTransfer-Encoding: x,,chunked\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "G\rT", "\r", "\n\n\n", "GET / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nA:\r\nB: \t\r\nContent-Length: 0\r\nConnection: ,,,\r\n\r\n",
	}
	for _, head := range heads {
		for i := 0; i <= len(head); i++ {
			parseHead([]byte(head[:i]))
		}
	}
}
