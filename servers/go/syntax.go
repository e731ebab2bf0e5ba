package main

import "strings"

// Rules 3–5 of SPEC §5, checked the way the flagship's parser (httparse 1.10 with the
// flagship's own target and version checks) checks them: left to right, stopping at the
// first octet that cannot belong to a valid head. A head cut short passes so far.

// Octet classes (RFC 9110 §5.6.2 tchar; RFC 9112 request-target and field-value octets
// as httparse accepts them, before the stricter target check of rule 3).
var (
	isTchar      = octets(func(b int) bool { return b < 0x80 && strings.IndexByte(tchars, byte(b)) >= 0 })
	isTargetish  = octets(func(b int) bool { return b >= 0x21 && b != 0x7f })
	isFieldValue = octets(func(b int) bool { return b == '\t' || (b >= 0x20 && b != 0x7f) })
)

const tchars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// octets is the table of the octets for which member is true.
func octets(member func(b int) bool) (set [256]bool) {
	for b := 0; b < 256; b++ {
		set[b] = member(b)
	}
	return set
}

// syntaxError is where checkSyntax stopped: not a valid head, and why.
type syntaxError uint8

const (
	syntaxOK      syntaxError = iota // valid so far (complete or cut short)
	syntaxBad                        // 400
	syntaxVersion                    // a version other than HTTP/1.0 or HTTP/1.1: see versionError
)

// checkSyntax applies rules 3–5 to head (complete, or cut short: then it passes as far
// as it goes) and returns the refusal, or rejectNone.
func checkSyntax(head []byte) reject {
	switch syntax(head) {
	case syntaxBad:
		return rejectBadRequest
	case syntaxVersion:
		return versionError(head)
	}
	return rejectNone
}

// syntax walks the request line and field lines of head.
func syntax(head []byte) syntaxError {
	i, n := 0, len(head)
	// Leading empty lines (rule 1); the caller has dropped all but a possible lone CR.
	for i < n && (head[i] == '\r' || head[i] == '\n') {
		if head[i] == '\r' {
			if i+1 == n {
				return syntaxOK
			}
			if head[i+1] != '\n' {
				return syntaxBad
			}
			i++
		}
		i++
	}
	// Method: one or more tchar, then SP.
	if i == n {
		return syntaxOK
	}
	if !isTchar[head[i]] {
		return syntaxBad
	}
	for i++; ; i++ {
		if i == n {
			return syntaxOK
		}
		if head[i] == ' ' {
			break
		}
		if !isTchar[head[i]] {
			return syntaxBad
		}
	}
	// Target: one or more visible octets, then SP; then visible ASCII only (rule 3).
	i++
	targetStart := i
	for i < n && isTargetish[head[i]] {
		i++
	}
	if i == n {
		return syntaxOK
	}
	if head[i] != ' ' || i == targetStart || !visibleASCII(head[targetStart:i]) {
		return syntaxBad
	}
	i++
	// Version: exactly HTTP/1.0 or HTTP/1.1; a prefix of "HTTP/1." while cut short.
	if n-i >= 8 {
		v := string(head[i : i+8])
		if v != "HTTP/1.0" && v != "HTTP/1.1" {
			return syntaxVersion
		}
		i += 8
	} else {
		const prefix = "HTTP/1."
		for j := 0; j < len(prefix); j, i = j+1, i+1 {
			if i == n {
				return syntaxOK
			}
			if head[i] != prefix[j] {
				return syntaxVersion
			}
		}
		return syntaxOK
	}
	// The request line's end.
	var ok bool
	if i, ok = lineEnd(head, i); !ok {
		return syntaxBad
	}
	// Field lines: name ":" OWS value, up to the empty line (rule 5).
	for {
		if i == n {
			return syntaxOK
		}
		if head[i] == '\r' || head[i] == '\n' {
			if _, ok = lineEnd(head, i); !ok {
				return syntaxBad
			}
			return syntaxOK
		}
		if !isTchar[head[i]] {
			return syntaxBad // obs-fold, an empty name, a non-token octet
		}
		for i < n && isTchar[head[i]] {
			i++
		}
		if i == n {
			return syntaxOK
		}
		if head[i] != ':' {
			return syntaxBad // whitespace before the colon, among others
		}
		i++
		for i < n && isFieldValue[head[i]] {
			i++
		}
		if i == n {
			return syntaxOK
		}
		if i, ok = lineEnd(head, i); !ok {
			return syntaxBad // a control octet or DEL in the value
		}
	}
}

// lineEnd checks for CRLF or LF at head[i] and returns the index after it; a CR at the
// very end passes (cut short), returning n.
func lineEnd(head []byte, i int) (int, bool) {
	switch {
	case i < len(head) && head[i] == '\n':
		return i + 1, true
	case i < len(head) && head[i] == '\r':
		if i+1 == len(head) {
			return i + 1, true
		}
		return i + 2, head[i+1] == '\n'
	}
	return i, i == len(head)
}

// visibleASCII reports whether every octet of s is in 0x21–0x7E.
func visibleASCII(s []byte) bool {
	for _, b := range s {
		if b < 0x21 || b > 0x7e {
			return false
		}
	}
	return true
}

// versionError is rule 4 for a request line whose version is neither HTTP/1.0 nor
// HTTP/1.1: 505 for another HTTP/DIGIT.DIGIT after a well-formed method and target,
// else 400.
func versionError(head []byte) reject {
	line := head
	for i, b := range head {
		if b == '\n' {
			line = head[:i]
			break
		}
	}
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	var parts [3][]byte
	for p := range parts {
		sp := indexByte(line, ' ')
		if p == 2 {
			if sp >= 0 {
				return rejectBadRequest // a fourth part
			}
			parts[p] = line
			break
		}
		if sp < 0 {
			return rejectBadRequest
		}
		parts[p], line = line[:sp], line[sp+1:]
	}
	method, target, version := parts[0], parts[1], parts[2]
	if len(method) == 0 || len(target) == 0 || !visibleASCII(target) {
		return rejectBadRequest
	}
	for _, b := range method {
		if !isTchar[b] {
			return rejectBadRequest
		}
	}
	if len(version) == 8 && string(version[:5]) == "HTTP/" && isDigit(version[5]) &&
		version[6] == '.' && isDigit(version[7]) {
		return rejectVersion
	}
	return rejectBadRequest
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func indexByte(s []byte, c byte) int {
	for i, b := range s {
		if b == c {
			return i
		}
	}
	return -1
}
