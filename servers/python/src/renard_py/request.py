"""Request heads (SPEC §2, §5, §6, §7.1): one entry point, `parse`, with three outcomes.

The grammar of SPEC §5 rules 2-5 is written as compiled regular expressions, so that the
octets of a head are checked in C: one `HEAD.match` decides a well-formed head in the common
case; `_parse_slow` makes the flagship's single pass for everything else (leading empty
lines, partial heads, limits, errors), so that the same octet decides the same answer.

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
_LINE_END = b"\r\n"
_TCHAR_RUN = re.compile(rb"[%s]*" % _TCHAR)
_VCHAR_RUN = re.compile(rb"[\x21-\x7e]*")
_VALUE_RUN = re.compile(rb"[%s]*" % _VALUE)
# The longest prefix of HTTP/DIGIT.DIGIT.
_VERSION_RUN = re.compile(rb"(?:H(?:T(?:T(?:P(?:/(?:[0-9](?:\.[0-9]?)?)?)?)?)?)?)?")
# The fields renard reads, from a field section already checked line by line.
_USED_FIELDS = re.compile(
    rb"^(host|content-length|transfer-encoding|connection|expect):[ \t]*([^\r\n]*)",
    re.IGNORECASE | re.MULTILINE)
# Host (rule 7): reg-name / IPv4 octets, or an IP-literal, then an optional port.
_HOST = re.compile(
    rb"(?:\[[A-Za-z0-9\-._~!$&'()*+,;=:]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::[0-9]*)?")
_OWS = b" \t"


def parse(buf: bytes, start: int = 0, resume: tuple | None = None) -> tuple:
    """The request head at buf[start:] (SPEC §5): COMPLETE with the Request and the offset
    after the head; PARTIAL with a checkpoint (or None) and the offset up to which leading
    empty lines may be dropped; ERROR with the status (400, 414, 431, 501, 505).

    `resume`: the checkpoint of the PARTIAL outcome for the same head, when buf[start:]
    is that head with more octets after it; the lines it covers are not looked at again
    (a head dripped octet by octet costs O(n) line checks, not O(n²))."""
    if resume is not None:
        return _field_lines(buf, start, *resume)
    m = HEAD.match(buf, start)
    if m is not None:
        end = m.end()
        # A head of 300 octets or less holds fewer than 100 field lines ("a:\n" is 3).
        if end - start <= 300 or (
                m.end(3) - start <= MAX_REQUEST_LINE and end - m.start(4) <= MAX_FIELD_SECTION
                and m.group(4).count(b"\n") <= MAX_FIELD_LINES):
            method, target, minor, fields = m.groups()
            return interpret(method, target, minor == b"0", fields, end)
    return _parse_slow(buf, start)


def _parse_slow(buf: bytes, start: int) -> tuple:
    """Everything but a whole well-formed head: the flagship's single pass, in which the
    octet that decides a rule decides the answer (SPEC §5: a bad octet, an over-long line
    or section is answered at once). Runs of valid octets are matched in C; each limit is
    checked where a run stops, before the octet that stopped it."""
    n = len(buf)
    while start < n:  # rule 1: leading empty lines
        if buf[start] == 10:
            start += 1
        elif buf[start] != 13:
            break
        elif start + 1 == n:
            return PARTIAL, None, start
        elif buf[start + 1] != 10:
            return ERROR, 400, 0
        else:
            start += 2
    need_more = (PARTIAL, None, start)
    if start == n:
        return need_more
    line_limit = start + MAX_REQUEST_LINE
    # Rule 3: method SP target SP.
    method_end = _TCHAR_RUN.match(buf, start).end()
    if method_end > line_limit:
        return ERROR, 414, 0
    if method_end == n:
        return need_more
    if buf[method_end] != 32 or method_end == start:
        return ERROR, 400, 0
    target_end = _VCHAR_RUN.match(buf, method_end + 1).end()
    if target_end > line_limit:
        return ERROR, 414, 0
    if target_end == n:
        return need_more
    if buf[target_end] != 32 or target_end == method_end + 1:
        return ERROR, 400, 0
    # Rule 4: HTTP/DIGIT.DIGIT, then the line end; 505 for another version.
    pos = _VERSION_RUN.match(buf, target_end + 1).end()
    if pos > line_limit:
        return ERROR, 414, 0
    if pos == n:
        return need_more
    if pos - target_end != 9 or buf[pos] not in _LINE_END:
        return ERROR, 400, 0
    end = _line_end(buf, pos)
    if end <= 0:
        return need_more if end == 0 else (ERROR, 400, 0)
    version = buf[target_end + 6:pos:2]  # major and minor digits
    if version != b"11" and version != b"10":
        return ERROR, 505, 0
    fields_start = pos + end - start
    return _field_lines(buf, start, method_end - start, target_end - start, version,
                        fields_start, 0, fields_start)


def _field_lines(buf: bytes, start: int, method_end: int, target_end: int, version: bytes,
                 fields_start: int, lines: int, pos: int, step: int = 0) -> tuple:
    """Rules 5 and 6 from `pos`, then 7-9 at the empty line; offsets count from `start`,
    the head's first octet; `step` is where `pos` stands in its line (_LINE_START, _NAME,
    _VALUE). PARTIAL carries the checkpoint: these arguments where the octets ran out."""
    method_end += start
    target_end += start
    fields_start += start
    pos += start
    n = len(buf)
    fields_limit = fields_start + MAX_FIELD_SECTION

    def need_more(step: int) -> tuple:
        return PARTIAL, (method_end - start, target_end - start, version,
                         fields_start - start, lines, pos - start, step), start

    while True:  # Rules 5 and 6, line by line.
        if step == _LINE_START:
            if pos == n:
                return need_more(_LINE_START)
            if buf[pos] in _LINE_END:  # the empty line
                end = _line_end(buf, pos)
                if end <= 0:
                    return need_more(_LINE_START) if end == 0 else (ERROR, 400, 0)
                pos += end
                if pos > fields_limit:
                    return ERROR, 431, 0
                return interpret(buf[start:method_end], buf[method_end + 1:target_end],
                                 version == b"10", buf[fields_start:pos], pos)
        if step != _VALUE:
            pos = _TCHAR_RUN.match(buf, pos).end()
            if pos > fields_limit:
                return ERROR, 431, 0
            if pos == n:
                return need_more(_NAME)
            if buf[pos] != 58 or buf[pos - 1] in _LINE_END:  # ":" after a non-empty name
                return ERROR, 400, 0
            pos += 1
        pos = _VALUE_RUN.match(buf, pos).end()
        if pos > fields_limit:
            return ERROR, 431, 0
        if pos == n:
            return need_more(_VALUE)
        if buf[pos] not in _LINE_END:
            return ERROR, 400, 0  # a control octet or DEL
        end = _line_end(buf, pos)
        if end <= 0:
            return need_more(_VALUE) if end == 0 else (ERROR, 400, 0)
        lines += 1
        if lines > MAX_FIELD_LINES:
            return ERROR, 431, 0
        pos += end
        if pos > fields_limit:
            return ERROR, 431, 0
        step = _LINE_START


_LINE_START, _NAME, _VALUE = 0, 1, 2


def _line_end(buf: bytes, pos: int) -> int:
    """Octets of the line end at buf[pos] (CR or LF): 1 or 2; 0 when a CR ends the input
    (it may begin a CRLF); -1 for a CR followed by anything else (rule 2)."""
    if buf[pos] == 10:
        return 1
    if pos + 1 == len(buf):
        return 0
    return 2 if buf[pos + 1] == 10 else -1


def interpret(method: bytes, target: bytes, http10: bool, fields: bytes, end: int) -> tuple:
    """Rules 7-9 on a head that passed rules 1-6; `fields` is its field section."""
    host_lines = content_length_lines = transfer_encoding_lines = 0
    content_length = transfer_encoding = None
    close = keep_alive_token = expect_continue = False
    for name, value in _USED_FIELDS.findall(fields):  # leading OWS skipped
        size = len(name)  # the five names differ in length
        if size == 4:  # Host (rule 7)
            host_lines += 1
            valid = _hosts_seen.get(value)
            if valid is None:
                valid = _check_host(value)
            if not valid:
                return _BAD_REQUEST
            continue
        value = value.rstrip(_OWS)
        if size == 14:  # Content-Length
            content_length_lines += 1
            content_length = int(value) if 0 < len(value) <= 18 and value.isdigit() else None
        elif size == 17:  # Transfer-Encoding
            transfer_encoding_lines += 1
            transfer_encoding = value
        elif size == 10:  # Connection (SPEC §7.1)
            for token in value.lower().split(b","):
                token = token.strip(_OWS)
                close = close or token == b"close"
                keep_alive_token = keep_alive_token or token == b"keep-alive"
        else:  # Expect (SPEC §6)
            expect_continue = value.lower() == b"100-continue"
    # Rule 7: exactly one Host on HTTP/1.1, at most one on HTTP/1.0.
    if host_lines > 1 or (not http10 and host_lines == 0):
        return _BAD_REQUEST
    # Rule 8.
    if content_length_lines and (content_length_lines > 1 or content_length is None):
        return _BAD_REQUEST
    chunked = transfer_encoding is not None
    if chunked:
        if content_length_lines or http10 or transfer_encoding_lines > 1:
            return _BAD_REQUEST
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
            return _BAD_REQUEST
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


_BAD_REQUEST = (ERROR, 400, 0)
# Host values already judged (a server sees few): value as captured -> valid.
_hosts_seen: dict[bytes, bool] = {}
_HOSTS_REMEMBERED = 64


def _check_host(value: bytes) -> bool:
    """Rule 7 on a Host value (leading OWS already skipped), remembered."""
    valid = _HOST.fullmatch(value.rstrip(_OWS)) is not None
    if len(_hosts_seen) >= _HOSTS_REMEMBERED:
        _hosts_seen.clear()
    _hosts_seen[value] = valid
    return valid


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
