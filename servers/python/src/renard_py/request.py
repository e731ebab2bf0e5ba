"""Request heads (SPEC §2, §5, §6, §7.1): one entry point, `parse`, with three outcomes.

The grammar of SPEC §5 rules 2-5 is written as compiled regular expressions, so that the
octets of a head are checked in C: one `HEAD.match` decides a well-formed head in the common
case; `_parse_slow` replays the flagship's order of checks octet position by octet position
for everything else (leading empty lines, partial heads, limits, errors).

Why not httptools (llhttp): it refuses what the spec serves (any token as a method, `FOO /`
is 405; bare LF line ends) and raises on CONNECT and Upgrade, so it could only ever run
behind checks that had already decided every case; see README.md, "The parser".
"""

from __future__ import annotations

import re

from .seed import seed_hash

# Limits (SPEC §5 rules 3 and 6), in octets and lines.
MAX_REQUEST_LINE = 8192       # request line without its line end
MAX_FIELD_SECTION = 16384     # from after the request line's end to the empty line included
MAX_FIELD_LINES = 100

# The three outcomes of `parse`:
# (COMPLETE, Request, end), (PARTIAL, None, drop), (ERROR, status, 0).
COMPLETE, PARTIAL, ERROR = 0, 1, 2

# Routes (SPEC §2); a Request is the tuple
# (route, seed, head_method, http10, keep_alive, content_length, chunked, expect_continue)
# where seed is the FNV-1a-64 of the `seed` value, or None for a random draw.
REDIRECT, HEALTH, NOT_FOUND, METHOD_NOT_ALLOWED = 0, 1, 2, 3

_TCHAR = rb"!#$%&'*+\-.^_`|~0-9A-Za-z"
_VALUE = rb"\t\x20-\x7e\x80-\xff"          # field value octets (RFC 9110 §5.5, obs-text)

# A whole well-formed head at `pos`: request line, field lines, empty line (rules 2-5).
HEAD = re.compile(
    rb"([%s]+) ([\x21-\x7e]+) HTTP/1\.([01])\r?\n((?:[%s]+:[%s]*\r?\n)*)\r?\n"
    % (_TCHAR, _TCHAR, _VALUE))
_REQUEST_LINE = re.compile(rb"[%s]+ [\x21-\x7e]+ HTTP/1\.[01]" % _TCHAR)
# Another HTTP/DIGIT.DIGIT after a well-formed method and target: 505 (rule 4).
_OTHER_VERSION = re.compile(rb"[%s]+ [\x21-\x7e]+ HTTP/[0-9]\.[0-9]" % _TCHAR)
# What may still become a valid request line (the version as httparse reads it: 1.0/1.1
# octet by octet, so a partial `HTTP/2` is already refused; a target is checked for
# visible ASCII once its SP has come).
_REQUEST_PREFIX = re.compile(
    rb"(?:[%s]+(?: (?:[\x21-\x7e]+ (?:H(?:T(?:T(?:P(?:/(?:1(?:\.[01]?)?)?)?)?)?)?)?"
    rb"|[\x21-\x7e\x80-\xff]+)?)?)?" % _TCHAR)
_FIELD_LINE = re.compile(rb"[%s]+:[%s]*" % (_TCHAR, _VALUE))
_FIELD_PREFIX = re.compile(rb"[%s]*(?::[%s]*)?" % (_TCHAR, _VALUE))
_BARE_CR = re.compile(rb"\r(?=[^\n])")
# The fields renard reads, from a field section already checked line by line.
_USED_FIELDS = re.compile(
    rb"^(host|content-length|transfer-encoding|connection|expect):[ \t]*([^\r\n]*)",
    re.IGNORECASE | re.MULTILINE)
# Host (rule 7): reg-name / IPv4 octets, or an IP-literal, then an optional port.
_HOST = re.compile(
    rb"(?:\[[A-Za-z0-9\-._~!$&'()*+,;=:]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::[0-9]*)?")
_OWS = b" \t"


def parse(buf: bytes, start: int = 0) -> tuple:
    """The request head at buf[start:] (SPEC §5): COMPLETE with the Request and the offset
    after the head; PARTIAL with the offset up to which leading empty lines may be dropped;
    ERROR with the status (400, 414, 431, 501, 505)."""
    m = HEAD.match(buf, start)
    if (m is not None and m.end(3) - start <= MAX_REQUEST_LINE
            and m.end() - m.start(4) <= MAX_FIELD_SECTION
            and m.group(4).count(b"\n") <= MAX_FIELD_LINES):
        return interpret(m.group(1), m.group(2), m.group(3) == b"0", m.group(4), m.end())
    return _parse_slow(buf, start)


def _parse_slow(buf: bytes, start: int) -> tuple:
    n = len(buf)
    while start < n:  # rule 1: leading empty lines
        if buf[start] == 10:
            start += 1
        elif buf[start] == 13 and start + 1 < n and buf[start + 1] == 10:
            start += 2
        else:
            break
    if start == n:
        return PARTIAL, None, start
    shape, value = _scan(buf, start)
    if shape is ERROR:
        return ERROR, value, 0
    if shape is PARTIAL:
        status = _check_syntax(buf, start, n, complete=False)
        return (ERROR, status, 0) if status else (PARTIAL, None, start)
    if shape is _OVERSIZED:
        limit = min(n, start + MAX_REQUEST_LINE + 2 + MAX_FIELD_SECTION + 1)
        return ERROR, _check_syntax(buf, start, limit, complete=False) or 431, 0
    head_end = value
    status = _check_syntax(buf, start, head_end, complete=True)
    if status:
        return ERROR, status, 0
    line_end = buf.index(b"\n", start)
    method, target, version = buf[start:line_end].rstrip(b"\r").split(b" ")
    return interpret(method, target, version == b"HTTP/1.0", buf[line_end + 1:head_end], head_end)


_OVERSIZED = 3


def _scan(buf: bytes, start: int) -> tuple:
    """Where the head at buf[start:] ends, enforcing rule 2 (bare CR) and the limits of
    rules 3 and 6 in the order their octets arrive: (COMPLETE, head_end), (PARTIAL, None),
    (_OVERSIZED, None) or (ERROR, status)."""
    n = len(buf)
    line_start = start
    fields_start = None  # offset after the request line's LF
    field_lines = 0
    while True:
        lf = buf.find(b"\n", line_start)
        if _BARE_CR.search(buf, line_start, n if lf < 0 else lf):
            return ERROR, 400
        if lf < 0:
            break
        content_end = lf - 1 if lf > line_start and buf[lf - 1] == 13 else lf
        if fields_start is None:
            if content_end - start > MAX_REQUEST_LINE:
                return ERROR, 414
            fields_start = lf + 1
        else:
            if lf + 1 - fields_start > MAX_FIELD_SECTION:
                return _OVERSIZED, None
            if content_end == line_start:
                return COMPLETE, lf + 1
            field_lines += 1
            if field_lines > MAX_FIELD_LINES:
                return _OVERSIZED, None
        line_start = lf + 1
    received = n - 1 if buf[n - 1] == 13 else n  # a last CR may begin a CRLF
    if fields_start is None and received - start > MAX_REQUEST_LINE:
        return ERROR, 414
    if fields_start is not None and received - fields_start > MAX_FIELD_SECTION:
        return _OVERSIZED, None
    return PARTIAL, None


def _check_syntax(buf: bytes, start: int, end: int, complete: bool) -> int:
    """Rules 3-5 on buf[start:end], a head or the start of one: 0 when every line (and,
    when not complete, the unfinished last line) can belong to a valid head, else the
    status. Checking stops at the empty line."""
    lines = buf[start:end].split(b"\n")
    tail = b"" if complete else lines.pop()
    for index, line in enumerate(lines):
        line = line[:-1] if line.endswith(b"\r") else line
        if index == 0:
            if not _REQUEST_LINE.fullmatch(line):
                return 505 if _OTHER_VERSION.fullmatch(line) else 400
        elif not line:
            return 0
        elif not _FIELD_LINE.fullmatch(line):
            return 400
    tail = tail[:-1] if tail.endswith(b"\r") else tail
    if not lines:
        if _REQUEST_PREFIX.fullmatch(tail):
            return 0
        return 505 if _OTHER_VERSION.fullmatch(tail) else 400
    return 0 if _FIELD_PREFIX.fullmatch(tail) else 400


def interpret(method: bytes, target: bytes, http10: bool, fields: bytes, end: int) -> tuple:
    """Rules 7-9 on a head that passed rules 1-6; `fields` is its field section."""
    host_lines = 0
    content_length = None
    content_length_lines = 0
    transfer_encoding = None
    transfer_encoding_lines = 0
    close = keep_alive_token = expect_continue = False
    for name, value in _USED_FIELDS.findall(fields):
        name = name.lower()
        value = value.strip(_OWS)
        if name == b"host":
            host_lines += 1
            if not _HOST.fullmatch(value):
                return ERROR, 400, 0
        elif name == b"content-length":
            content_length_lines += 1
            content_length = int(value) if 0 < len(value) <= 18 and value.isdigit() else None
        elif name == b"transfer-encoding":
            transfer_encoding_lines += 1
            transfer_encoding = value
        elif name == b"connection":
            for token in value.lower().split(b","):
                token = token.strip(_OWS)
                close = close or token == b"close"
                keep_alive_token = keep_alive_token or token == b"keep-alive"
        else:
            expect_continue = value.lower() == b"100-continue"
    # Rule 7: exactly one Host on HTTP/1.1, at most one on HTTP/1.0.
    if host_lines > 1 or (not http10 and host_lines == 0):
        return ERROR, 400, 0
    # Rule 8.
    if content_length_lines > 1 or (content_length_lines == 1 and content_length is None):
        return ERROR, 400, 0
    chunked = transfer_encoding is not None
    if chunked:
        if content_length_lines or http10 or transfer_encoding_lines > 1:
            return ERROR, 400, 0
        status = _transfer_coding_status(transfer_encoding)
        if status:
            return ERROR, status, 0
    content_length = content_length or 0
    # Rule 9.
    if target[0] == 47:  # "/": origin-form
        path_and_query = target
    else:
        path_and_query = _absolute_path_and_query(target)
        if path_and_query is None:
            return ERROR, 400, 0
    query_at = path_and_query.find(b"?")
    path = path_and_query if query_at < 0 else path_and_query[:query_at]
    readable = method == b"GET" or method == b"HEAD"
    if path == b"/" or not path:
        if readable:
            seed = None if query_at < 0 else seed_hash(path_and_query[query_at + 1:])
            route = REDIRECT
        else:
            seed, route = None, METHOD_NOT_ALLOWED
    elif path == b"/healthz":
        seed, route = None, HEALTH if readable else METHOD_NOT_ALLOWED
    else:
        seed, route = None, NOT_FOUND
    keep_alive = not close and (not http10 or keep_alive_token)
    expect_continue = expect_continue and not http10 and content_length > 0
    return COMPLETE, (route, seed, method == b"HEAD", http10, keep_alive, content_length,
                      chunked, expect_continue), end


def _transfer_coding_status(value: bytes) -> int:
    """Rule 8 on a Transfer-Encoding value: 0 for exactly `chunked`, 501 for codings
    before a final `chunked`, else 400."""
    codings = [coding.strip(_OWS) for coding in value.split(b",")]
    if not all(codings) or codings[-1].lower() != b"chunked":
        return 400
    return 501 if len(codings) > 1 else 0


def _absolute_path_and_query(target: bytes) -> bytes | None:
    """The `path?query` of an absolute-form target `http(s)://authority...` (SPEC §2), or
    None for any other form. An empty path is "/" (RFC 9110 §4.2.3), left empty here."""
    lowered = target[:8].lower()
    if lowered.startswith(b"http://"):
        rest = target[7:]
    elif lowered.startswith(b"https://"):
        rest = target[8:]
    else:
        return None
    authority_end = len(rest)
    for delimiter in b"/?#":
        at = rest.find(bytes((delimiter,)))
        if 0 <= at < authority_end:
            authority_end = at
    if authority_end == 0:
        return None
    return rest[authority_end:]
