package main

import "strings"

// Rules 7–9 of SPEC §5 and the persistence of §7.1, on a head that passed rules 1–6.

// interpret reads the meaning of a complete, syntactically valid head (no leading empty
// lines, its empty line included).
func interpret(head []byte) (request, reject) {
	sp1 := indexByte(head, ' ')
	method := head[:sp1]
	rest := head[sp1+1:]
	sp2 := indexByte(rest, ' ')
	target := rest[:sp2]
	http10 := rest[sp2+8] == '0' // "HTTP/1.x"; the syntax pass allowed only 1.0 and 1.1
	i := sp1 + 1 + sp2 + 1 + 8
	end, _ := lineEnd(head, i)
	i += end

	var (
		hostLines, lengthLines, codingLines int
		contentLength                       uint64
		lengthValid                         bool
		codings                             []byte
		closeToken, keepAliveToken, expect  bool
	)
	for {
		lf := indexByte(head[i:], '\n') + i
		line := head[i:lf]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		i = lf + 1
		if len(line) == 0 {
			break
		}
		colon := indexByte(line, ':')
		name, value := line[:colon], trimOWS(line[colon+1:])
		switch {
		case equalFold(name, "host"):
			hostLines++
			if !validHost(value) {
				return request{}, rejectBadRequest
			}
		case equalFold(name, "content-length"):
			lengthLines++
			contentLength, lengthValid = parseContentLength(value)
		case equalFold(name, "transfer-encoding"):
			codingLines++
			codings = value
		case equalFold(name, "connection"):
			for len(value) > 0 {
				token := value
				if comma := indexByte(value, ','); comma >= 0 {
					token, value = value[:comma], value[comma+1:]
				} else {
					value = nil
				}
				token = trimOWS(token)
				closeToken = closeToken || equalFold(token, "close")
				keepAliveToken = keepAliveToken || equalFold(token, "keep-alive")
			}
		case equalFold(name, "expect"):
			expect = equalFold(value, "100-continue")
		}
	}
	// Rule 7: exactly one Host on HTTP/1.1, at most one on HTTP/1.0.
	if hostLines > 1 || (!http10 && hostLines == 0) {
		return request{}, rejectBadRequest
	}
	// Rule 8.
	if lengthLines > 1 || (lengthLines == 1 && !lengthValid) {
		return request{}, rejectBadRequest
	}
	chunked := codingLines > 0
	if chunked {
		if lengthLines > 0 || http10 || codingLines > 1 {
			return request{}, rejectBadRequest
		}
		if r := checkCodings(codings); r != rejectNone {
			return request{}, r
		}
	}
	// Rule 9.
	path, pathAndQuery, ok := splitTarget(target)
	if !ok {
		return request{}, rejectBadRequest
	}
	readable := string(method) == "GET" || string(method) == "HEAD"
	req := request{
		headMethod:     string(method) == "HEAD",
		http10:         http10,
		keepAlive:      !closeToken && (!http10 || keepAliveToken),
		contentLength:  contentLength,
		chunked:        chunked,
		expectContinue: expect && !http10 && contentLength > 0,
	}
	switch {
	case string(path) == "/" && readable:
		req.route = routeRedirect
		req.seedHash, req.seeded = seedHash(pathAndQuery)
	case string(path) == "/healthz" && readable:
		req.route = routeHealth
	case string(path) == "/" || string(path) == "/healthz":
		req.route = routeMethodNotAllowed
	default:
		req.route = routeNotFound
	}
	return req, rejectNone
}

// checkCodings is rule 8 on a Transfer-Encoding value: the last coding is chunked and no
// element is empty (else 400); codings before it are not implemented (501).
func checkCodings(value []byte) reject {
	count := 0
	var last []byte
	for {
		coding := value
		comma := indexByte(value, ',')
		if comma >= 0 {
			coding, value = value[:comma], value[comma+1:]
		}
		coding = trimOWS(coding)
		if len(coding) == 0 {
			return rejectBadRequest
		}
		count++
		last = coding
		if comma < 0 {
			break
		}
	}
	switch {
	case !equalFold(last, "chunked"):
		return rejectBadRequest
	case count > 1:
		return rejectNotImplemented
	}
	return rejectNone
}

// splitTarget returns the path and the path-and-query of an origin-form or
// absolute-form target (SPEC §2; an empty absolute path is "/", RFC 9110 §4.2.3); ok is
// false for any other form.
func splitTarget(target []byte) (path, pathAndQuery []byte, ok bool) {
	pathAndQuery = target
	if len(target) == 0 || target[0] != '/' {
		var rest []byte
		switch {
		case hasPrefixFold(target, "http://"):
			rest = target[len("http://"):]
		case hasPrefixFold(target, "https://"):
			rest = target[len("https://"):]
		default:
			return nil, nil, false
		}
		authority := len(rest)
		for i, b := range rest {
			if b == '/' || b == '?' || b == '#' {
				authority = i
				break
			}
		}
		if authority == 0 {
			return nil, nil, false
		}
		pathAndQuery = rest[authority:]
	}
	path = pathAndQuery
	if q := indexByte(pathAndQuery, '?'); q >= 0 {
		path = pathAndQuery[:q]
	}
	if len(path) == 0 {
		path = slash
	}
	return path, pathAndQuery, true
}

var slash = []byte("/")

// parseContentLength reads a Content-Length value: 1 to 18 digits, nothing else.
func parseContentLength(value []byte) (uint64, bool) {
	if len(value) == 0 || len(value) > 18 {
		return 0, false
	}
	var n uint64
	for _, b := range value {
		if !isDigit(b) {
			return 0, false
		}
		n = n*10 + uint64(b-'0')
	}
	return n, true
}

// validHost is rule 7 on a trimmed Host value: empty, or host [":" port] with host a
// reg-name or IPv4 (unreserved, sub-delims, "%") or an IP-literal in brackets, port digits.
func validHost(value []byte) bool {
	if len(value) == 0 {
		return true
	}
	var rest []byte
	if value[0] == '[' {
		end := indexByte(value, ']')
		if end < 0 || end == 1 {
			return false
		}
		for _, b := range value[1:end] {
			if b == '%' || (!isHostOctet[b] && b != ':') {
				return false
			}
		}
		rest = value[end+1:]
	} else {
		end := indexByte(value, ':')
		if end < 0 {
			end = len(value)
		}
		for _, b := range value[:end] {
			if !isHostOctet[b] {
				return false
			}
		}
		rest = value[end:]
	}
	if len(rest) == 0 {
		return true
	}
	if rest[0] != ':' {
		return false
	}
	for _, b := range rest[1:] {
		if !isDigit(b) {
			return false
		}
	}
	return true
}

// isHostOctet: RFC 3986 unreserved, sub-delims, and "%" (pct-encoded in a reg-name).
var isHostOctet = octets(func(b int) bool {
	return b < 0x80 && (isAlnum(byte(b)) || strings.IndexByte("-._~!$&'()*+,;=%", byte(b)) >= 0)
})

func isAlnum(b byte) bool {
	return isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'z')
}

// trimOWS drops optional whitespace (SP, HTAB) at both ends of s.
func trimOWS(s []byte) []byte {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// equalFold compares s with the lower-case ASCII word, ignoring ASCII case.
func equalFold(s []byte, word string) bool {
	if len(s) != len(word) {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != word[i] {
			return false
		}
	}
	return true
}

func hasPrefixFold(s []byte, prefix string) bool {
	return len(s) >= len(prefix) && equalFold(s[:len(prefix)], prefix)
}
