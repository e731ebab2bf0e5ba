//! Request heads (SPEC §2, §5, §6, §7.1): one entry point, [`parse`], with three
//! outcomes. httparse reads the request line and field lines; this module adds the rules
//! that httparse leaves to its caller, in the order SPEC §5 lists them.
//!
//! What httparse does by default, and how the spec's answer comes out either way:
//! - leading empty lines: skipped here before httparse sees the head (rule 1);
//! - bare LF line ends: accepted by both (rule 2); a CR not followed by LF is found by
//!   [`scan`] before httparse runs;
//! - obs-fold and whitespace before the colon: httparse rejects them in requests (a field
//!   name must be a token), which is our 400 (rule 5);
//! - targets with octets 0x80–0xFF: httparse accepts them, [`check_target`] does not;
//! - versions other than `HTTP/1.0`/`HTTP/1.1`: httparse says `Version`, and
//!   [`version_error`] decides 505 against 400 (rule 4).

use crate::seed;
use httparse::Header;
use std::mem::MaybeUninit;

/// A field table httparse fills; left uninitialised (no 3 KiB memset per request).
type Fields<'b, const N: usize> = [MaybeUninit<Header<'b>>; N];

/// Longest request line served, in octets without its line end (SPEC §5 rule 3).
pub const MAX_REQUEST_LINE: usize = 8192;
/// Longest field section, in octets from after the request line to the empty line
/// included (SPEC §5 rule 6).
pub const MAX_FIELD_SECTION: usize = 16384;
/// Most field lines in one head (SPEC §5 rule 6).
pub const MAX_FIELD_LINES: usize = 100;

/// Why a request is refused; each one ends the connection (SPEC §7.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reject {
    /// 400: malformed head, bad Host or framing.
    BadRequest,
    /// 408: header deadline passed mid-head (decided by the connection, not here).
    Timeout,
    /// 414: request line longer than [`MAX_REQUEST_LINE`].
    UriTooLong,
    /// 431: field section longer than [`MAX_FIELD_SECTION`] or more than
    /// [`MAX_FIELD_LINES`] lines.
    FieldsTooLarge,
    /// 501: a transfer coding other than a lone `chunked`.
    NotImplemented,
    /// 505: `HTTP/DIGIT.DIGIT` other than 1.0 and 1.1.
    VersionNotSupported,
}

/// What the route of a well-formed request answers (SPEC §2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// 302 to the template; `seed` is FNV-1a-64 of the seed, None draws at random.
    Redirect { seed: Option<u64> },
    /// 200 `ok\n`.
    Health,
    /// 404.
    NotFound,
    /// 405 with `Allow: GET, HEAD`.
    MethodNotAllowed,
}

/// A complete, valid request head.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Octets the head occupies in the input, leading empty lines included.
    pub head_len: usize,
    /// What to answer.
    pub route: Route,
    /// HEAD: the answer carries no body.
    pub head_method: bool,
    /// The request is HTTP/1.0 (else HTTP/1.1).
    pub http10: bool,
    /// The connection persists after the answer by the request's own terms (SPEC §7.1).
    pub keep_alive: bool,
    /// Body octets that follow the head and are to be discarded (SPEC §6).
    pub content_length: u64,
    /// `Transfer-Encoding: chunked`: answer, then close (SPEC §6).
    pub chunked: bool,
    /// HTTP/1.1 `Expect: 100-continue` with a body: answer at once, then close (SPEC §6).
    pub expect_continue: bool,
}

/// The three outcomes of [`parse`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Parse {
    /// A whole head; its body (if any) starts at `head_len`.
    Complete(Request),
    /// Not enough input yet. The first `empty_lines` octets are leading empty lines that
    /// the caller may drop (they are never part of a request).
    Partial { empty_lines: usize },
    /// The head is refused with this status.
    Error(Reject),
}

/// Parse the request head at the start of `input` (SPEC §5). Never allocates except
/// on the over-limit path (rule 6), which re-reads up to 24 KiB with a larger field table.
pub fn parse(input: &[u8]) -> Parse {
    let start = leading_empty_lines(input);
    let buf = &input[start..];
    let shape = match scan(buf) {
        Ok(shape) => shape,
        Err(reject) => return Parse::Error(reject),
    };
    match shape {
        Shape::Incomplete => {
            // What has come may already break rules 3–5 (httparse stops at the first
            // bad octet): refuse it now rather than at the header deadline.
            let mut fields: Fields<MAX_FIELD_LINES> = [const { MaybeUninit::uninit() }; MAX_FIELD_LINES];
            match check_syntax(buf, &mut fields) {
                Ok(_) => Parse::Partial { empty_lines: start },
                Err(reject) => Parse::Error(reject),
            }
        }
        Shape::Oversized => Parse::Error(oversized(buf)),
        Shape::Head { head_end, .. } => {
            let mut fields: Fields<MAX_FIELD_LINES> = [const { MaybeUninit::uninit() }; MAX_FIELD_LINES];
            match check_syntax(&buf[..head_end], &mut fields) {
                Ok(req) => match interpret(&req) {
                    Ok(mut request) => {
                        request.head_len = start + head_end;
                        Parse::Complete(request)
                    }
                    Err(reject) => Parse::Error(reject),
                },
                Err(reject) => Parse::Error(reject),
            }
        }
    }
}

/// Octets of CRLF or LF empty lines at the start of `buf` (rule 1). A lone trailing CR
/// is left in place: it may be the start of a CRLF.
fn leading_empty_lines(buf: &[u8]) -> usize {
    let mut i = 0;
    loop {
        match buf[i..] {
            [b'\n', ..] => i += 1,
            [b'\r', b'\n', ..] => i += 2,
            _ => return i,
        }
    }
}

/// Where a head ends, found without parsing it.
#[derive(Debug, PartialEq, Eq)]
enum Shape {
    /// No empty line yet, and every limit still holds.
    Incomplete,
    /// The field section passed [`MAX_FIELD_SECTION`] or [`MAX_FIELD_LINES`].
    Oversized,
    /// The head is `buf[..head_end]`, its empty line included.
    Head { head_end: usize },
}

/// Find the end of the head in `buf` (no leading empty lines) while enforcing rule 2
/// (bare CR) and the size limits of rules 3 and 6.
fn scan(buf: &[u8]) -> Result<Shape, Reject> {
    let mut line_start = 0;
    let mut request_line_end = None; // index after the request line's LF
    let mut field_lines = 0;
    let mut i = 0;
    while i < buf.len() {
        match buf[i] {
            b'\r' => match buf.get(i + 1) {
                Some(b'\n') => {}
                Some(_) => return Err(Reject::BadRequest),
                None => break,
            },
            b'\n' => {
                let content_end = if i > line_start && buf[i - 1] == b'\r' { i - 1 } else { i };
                match request_line_end {
                    None => {
                        if content_end > MAX_REQUEST_LINE {
                            return Err(Reject::UriTooLong);
                        }
                        request_line_end = Some(i + 1);
                    }
                    Some(fields_start) => {
                        if i + 1 - fields_start > MAX_FIELD_SECTION {
                            return Ok(Shape::Oversized);
                        }
                        if content_end == line_start {
                            return Ok(Shape::Head { head_end: i + 1 });
                        }
                        field_lines += 1;
                        if field_lines > MAX_FIELD_LINES {
                            return Ok(Shape::Oversized);
                        }
                    }
                }
                line_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    // `buf[..i]` holds no complete head; the limits still apply to what has come.
    match request_line_end {
        None if i > MAX_REQUEST_LINE => Err(Reject::UriTooLong),
        Some(fields_start) if i - fields_start > MAX_FIELD_SECTION => Ok(Shape::Oversized),
        _ => Ok(Shape::Incomplete),
    }
}

/// The answer to a head past the rule 6 limits: rules 3–5 still come first, so the
/// syntax of what has arrived is checked with a field table large enough for all of it.
fn oversized(buf: &[u8]) -> Reject {
    let limit = buf.len().min(MAX_REQUEST_LINE + 2 + MAX_FIELD_SECTION + 1);
    let mut fields = vec![MaybeUninit::uninit(); limit / 3 + 1];
    match check_syntax(&buf[..limit], &mut fields) {
        Err(Reject::FieldsTooLarge) | Ok(_) => Reject::FieldsTooLarge,
        Err(reject) => reject,
    }
}

/// Rules 3–5 on `head` (complete or cut short): httparse, then the target octets.
/// A head that httparse finds incomplete passes (the caller decides what that means).
fn check_syntax<'h, 'b>(
    head: &'b [u8],
    fields: &'h mut [MaybeUninit<Header<'b>>],
) -> Result<httparse::Request<'h, 'b>, Reject> {
    let mut req = httparse::Request::new(&mut []);
    match req.parse_with_uninit_headers(head, fields) {
        Ok(_) => {}
        Err(httparse::Error::Version) => return Err(version_error(head)),
        Err(httparse::Error::TooManyHeaders) => return Err(Reject::FieldsTooLarge),
        Err(_) => return Err(Reject::BadRequest),
    }
    if let Some(target) = req.path {
        check_target(target.as_bytes())?;
    }
    Ok(req)
}

/// Rule 3 on a target that httparse accepted: visible ASCII only.
fn check_target(target: &[u8]) -> Result<(), Reject> {
    if target.iter().all(|&b| (0x21..=0x7e).contains(&b)) {
        Ok(())
    } else {
        Err(Reject::BadRequest)
    }
}

/// Rule 4, for a request line whose version httparse refused: 505 for another
/// `HTTP/DIGIT.DIGIT` after a well-formed method and target, else 400.
fn version_error(head: &[u8]) -> Reject {
    let line_end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let line = head[..line_end].strip_suffix(b"\r").unwrap_or(&head[..line_end]);
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Reject::BadRequest;
    };
    let well_formed = !method.is_empty()
        && method.iter().all(|&b| is_tchar(b))
        && !target.is_empty()
        && check_target(target).is_ok();
    match version {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if well_formed && major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            Reject::VersionNotSupported
        }
        _ => Reject::BadRequest,
    }
}

/// RFC 9110 tchar.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Rules 7–9 on a head that passed rules 1–6.
fn interpret(req: &httparse::Request) -> Result<Request, Reject> {
    let http10 = req.version == Some(0);
    let mut host_lines = 0;
    let mut content_length: Option<u64> = None;
    let mut content_length_lines = 0;
    let mut transfer_encoding: Option<&[u8]> = None;
    let mut transfer_encoding_lines = 0;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut expect_continue = false;
    for field in req.headers.iter() {
        let name = field.name.as_bytes();
        let value = trim_ows(field.value);
        if name.eq_ignore_ascii_case(b"host") {
            host_lines += 1;
            if !is_valid_host(value) {
                return Err(Reject::BadRequest);
            }
        } else if name.eq_ignore_ascii_case(b"content-length") {
            content_length_lines += 1;
            content_length = parse_content_length(value);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            transfer_encoding_lines += 1;
            transfer_encoding = Some(value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',').map(trim_ows) {
                close |= token.eq_ignore_ascii_case(b"close");
                keep_alive_token |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if name.eq_ignore_ascii_case(b"expect") {
            expect_continue = value.eq_ignore_ascii_case(b"100-continue");
        }
    }
    // Rule 7: exactly one Host on HTTP/1.1, at most one on HTTP/1.0.
    if host_lines > 1 || (!http10 && host_lines == 0) {
        return Err(Reject::BadRequest);
    }
    // Rule 8.
    if content_length_lines > 1 || (content_length_lines == 1 && content_length.is_none()) {
        return Err(Reject::BadRequest);
    }
    let chunked = match transfer_encoding {
        None => false,
        Some(_) if content_length_lines > 0 || http10 || transfer_encoding_lines > 1 => {
            return Err(Reject::BadRequest);
        }
        Some(codings) => {
            check_transfer_codings(codings)?;
            true
        }
    };
    let content_length = content_length.unwrap_or(0);
    // Rule 9.
    let (path, query_target) = split_target(req.path.unwrap_or("").as_bytes())?;
    let method = req.method.unwrap_or("").as_bytes();
    let readable = method == b"GET" || method == b"HEAD";
    let route = match path {
        b"/" if readable => Route::Redirect { seed: seed::seed_hash(query_target) },
        b"/healthz" if readable => Route::Health,
        b"/" | b"/healthz" => Route::MethodNotAllowed,
        _ => Route::NotFound,
    };
    Ok(Request {
        head_len: 0,
        route,
        head_method: method == b"HEAD",
        http10,
        keep_alive: !close && (!http10 || keep_alive_token),
        content_length,
        chunked,
        expect_continue: expect_continue && !http10 && content_length > 0,
    })
}

/// SPEC §5 rule 8 on a `Transfer-Encoding` value: the last coding is `chunked`, no
/// element is empty; codings before it are not implemented.
fn check_transfer_codings(value: &[u8]) -> Result<(), Reject> {
    let mut codings = value.split(|&b| b == b',').map(trim_ows);
    let mut count = 0;
    let mut last: &[u8] = b"";
    for coding in &mut codings {
        if coding.is_empty() {
            return Err(Reject::BadRequest);
        }
        count += 1;
        last = coding;
    }
    if !last.eq_ignore_ascii_case(b"chunked") {
        Err(Reject::BadRequest)
    } else if count > 1 {
        Err(Reject::NotImplemented)
    } else {
        Ok(())
    }
}

/// The path and the `path?query` part of an origin-form or absolute-form target
/// (SPEC §2); any other form is 400. An absolute-form target with no path has the path
/// "/" (RFC 9110 §4.2.3).
fn split_target(target: &[u8]) -> Result<(&[u8], &[u8]), Reject> {
    let path_and_query = if target.first() == Some(&b'/') {
        target
    } else {
        let after_scheme = strip_prefix_ignore_case(target, b"http://")
            .or_else(|| strip_prefix_ignore_case(target, b"https://"))
            .ok_or(Reject::BadRequest)?;
        let authority_end =
            after_scheme.iter().position(|&b| b == b'/' || b == b'?' || b == b'#').unwrap_or(after_scheme.len());
        if authority_end == 0 {
            return Err(Reject::BadRequest);
        }
        &after_scheme[authority_end..]
    };
    let path_end = path_and_query.iter().position(|&b| b == b'?').unwrap_or(path_and_query.len());
    let path = match &path_and_query[..path_end] {
        b"" => b"/".as_slice(),
        path => path,
    };
    Ok((path, path_and_query))
}

fn strip_prefix_ignore_case<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)).then(|| &s[prefix.len()..])
}

/// `Content-Length` value: 1 to 18 digits, nothing else (SPEC §5 rule 8).
fn parse_content_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 18 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(value.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// SPEC §5 rule 7: empty, or `host [":" port]` with host a reg-name/IPv4 or an
/// IP-literal in brackets, port digits.
fn is_valid_host(value: &[u8]) -> bool {
    if value.is_empty() {
        return true;
    }
    let rest = if value[0] == b'[' {
        let Some(close) = value.iter().position(|&b| b == b']') else { return false };
        let literal = &value[1..close];
        if literal.is_empty() || !literal.iter().all(|&b| is_unreserved_or_sub_delim(b) || b == b':') {
            return false;
        }
        &value[close + 1..]
    } else {
        let host_end = value.iter().position(|&b| b == b':').unwrap_or(value.len());
        if !value[..host_end].iter().all(|&b| is_unreserved_or_sub_delim(b) || b == b'%') {
            return false;
        }
        &value[host_end..]
    };
    match rest {
        [] => true,
        [b':', port @ ..] => port.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// RFC 3986 unreserved / sub-delims.
fn is_unreserved_or_sub_delim(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b)
}

/// `s` without optional whitespace (SP, HTAB) at either end.
fn trim_ows(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(s.len());
    let end = s.iter().rposition(|&b| b != b' ' && b != b'\t').map_or(start, |e| e + 1);
    &s[start..end]
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
