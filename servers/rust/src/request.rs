//! Request heads (SPEC §2, §5, §6, §7.1): one entry point, [`parse_more`], with three
//! outcomes, resumable across reads.
//!
//! One pass over the octets, each looked at once, with a 256-entry class table: a head
//! dripped octet by octet costs O(n) in total, because [`Progress`] keeps the position
//! and everything learned so far (picohttpparser's `last_len`, taken further: not only
//! the search for the end, the checks too). Every check of rules 1–6 is made at the
//! octet that decides it (SPEC §5: a bad octet, an over-long line or section is answered
//! at once); rules 7–9 need the whole head and are applied at its empty line, from facts
//! gathered on the way (which fields, how many, where their values are).

use crate::seed;

/// Longest request line served, in octets without its line end (SPEC §5 rule 3).
pub const MAX_REQUEST_LINE: usize = 8192;
/// Longest field section, in octets from after the request line to the empty line
/// included (SPEC §5 rule 6).
pub const MAX_FIELD_SECTION: usize = 16384;
/// Most field lines in one head (SPEC §5 rule 6).
pub const MAX_FIELD_LINES: u32 = 100;

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
    /// `/metrics` (SPEC §8): what it answers depends on `--metrics`; `readable`: GET or HEAD.
    Metrics { readable: bool },
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

/// The three outcomes of [`parse_more`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Parse {
    /// A whole head; its body (if any) starts at `head_len`.
    Complete(Request),
    /// Not enough input yet. The first `empty_lines` octets are leading empty lines that
    /// the caller drops (they are never part of a request); [`Progress`] already counts
    /// from after them.
    Partial { empty_lines: usize },
    /// The head is refused with this status.
    Error(Reject),
}

/// Octet classes (bit flags), one table lookup per octet.
const TCHAR: u8 = 1; // RFC 9110 token character
const VCHAR: u8 = 2; // 0x21..=0x7E: target octets (SPEC §5 rule 3)
const FIELD_VALUE: u8 = 4; // SP, HTAB, VCHAR, obs-text (rule 5)
const HOST: u8 = 8; // RFC 3986 unreserved, sub-delims and '%' (rule 7)

static CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut class = 0;
        let alnum = c.is_ascii_alphanumeric();
        if alnum
            || matches!(
                c,
                b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
            )
        {
            class |= TCHAR;
        }
        if c >= 0x21 && c <= 0x7e {
            class |= VCHAR | FIELD_VALUE;
        }
        if c == b' ' || c == b'\t' || c >= 0x80 {
            class |= FIELD_VALUE;
        }
        if alnum
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
            )
        {
            class |= HOST;
        }
        table[b] = class;
        b += 1;
    }
    table
};

#[inline(always)]
fn is(b: u8, class: u8) -> bool {
    #[cfg(test)]
    tests::LOOKS.with(|looks| looks.set(looks.get() + 1));
    CLASS[b as usize] & class != 0
}

/// Where the pass over a head stands.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum State {
    /// Before the request line: empty lines are skipped (rule 1).
    #[default]
    Start,
    Method,
    Target,
    Version,
    /// At the start of a field line, or of the empty line that ends the head.
    LineStart,
    Name,
    /// After the colon, in the value's leading whitespace.
    ValueStart,
    Value,
}

/// The fields that rules 7 and 8 and SPEC §7.1 read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum Field {
    #[default]
    Other,
    Host,
    ContentLength,
    TransferEncoding,
    Connection,
    Expect,
}

/// Everything learned about a head so far, positions counted from the head's first
/// octet (leading empty lines are dropped by the caller, see [`Parse::Partial`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The next octet to look at.
    pos: u32,
    state: State,
    /// The field line being read: its kind, start, and where its value starts.
    field: Field,
    line_start: u32,
    value_start: u32,
    /// Request line: the SP after the method, the SP after the target.
    method_end: u32,
    target_end: u32,
    /// `HTTP/1.0` (else `HTTP/1.1`).
    http10: bool,
    /// Where the field section starts (after the request line's line end).
    fields_start: u32,
    field_lines: u32,
    facts: Facts,
    /// Kept from request to request of a connection.
    memo: HostMemo,
}

/// The last Host value found valid on this connection (up to 32 octets): a client sends
/// the same Host with every request, and an equal value needs no second check (rule 7).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct HostMemo {
    len: u8,
    octets: [u8; 32],
}

impl HostMemo {
    /// Whether `value` is the remembered one: eight octets at a time (the last word may
    /// overlap the one before), no call to the C library's memcmp (musl's goes octet by
    /// octet).
    #[inline(always)]
    fn holds(&self, value: &[u8]) -> bool {
        let len = value.len();
        if usize::from(self.len) != len {
            return false;
        }
        let word = |bytes: &[u8], at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight octets"));
        if len < 8 {
            return value.iter().zip(&self.octets).all(|(a, b)| a == b);
        }
        let mut at = 0;
        while at + 8 < len {
            if word(value, at) != word(&self.octets, at) {
                return false;
            }
            at += 8;
        }
        word(value, len - 8) == word(&self.octets, len - 8)
    }

    fn keep(&mut self, value: &[u8]) {
        if value.len() <= self.octets.len() {
            self.octets[..value.len()].copy_from_slice(value);
            self.len = value.len() as u8;
        }
    }
}

impl Progress {
    /// Ready for the connection's next request (what is kept across requests stays).
    pub fn next_request(&mut self) {
        *self = Progress { memo: self.memo, ..Progress::default() };
    }
}

/// What the field lines said, for rules 7 and 8 and SPEC §7.1.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Facts {
    host_lines: u8,
    bad_host: bool,
    content_length_lines: u8,
    /// None: absent or not 1 to 18 digits.
    content_length: Option<u64>,
    transfer_encoding_lines: u8,
    /// Where the last `Transfer-Encoding` value lies (read only when it is the one).
    transfer_encoding: (u32, u32),
    close: bool,
    keep_alive: bool,
    expect_continue: bool,
}

/// Parse a whole head from scratch (tests and fuzzing; the server resumes with
/// [`parse_more`]).
pub fn parse(input: &[u8]) -> Parse {
    parse_more(input, &mut Progress::default())
}

/// Go on with the request head at the start of `input`, from where `progress` stands
/// (SPEC §5). After Partial the caller drops the reported empty lines and calls again
/// with the same octets and more after them; after Complete or Error it starts the next
/// request with a fresh [`Progress`]. Octets before `progress`'s position are not looked
/// at again (but for a CR at the very end, which waits for its LF).
#[inline]
pub fn parse_more(input: &[u8], progress: &mut Progress) -> Parse {
    if progress.state != State::Start {
        return head(input, progress);
    }
    // Rule 1: empty lines before the request line are dropped as they come.
    let mut at = 0;
    loop {
        match input.get(at) {
            Some(b'\n') => at += 1,
            Some(b'\r') => match input.get(at + 1) {
                Some(b'\n') => at += 2,
                Some(_) => return Parse::Error(Reject::BadRequest),
                None => return Parse::Partial { empty_lines: at },
            },
            Some(_) => break,
            None => return Parse::Partial { empty_lines: at },
        }
    }
    progress.state = State::Method;
    if at == 0 {
        return head(input, progress);
    }
    match head(&input[at..], progress) {
        Parse::Complete(request) => Parse::Complete(Request { head_len: at + request.head_len, ..request }),
        Parse::Partial { .. } => Parse::Partial { empty_lines: at },
        Parse::Error(reject) => Parse::Error(reject),
    }
}

/// Rules 2–6 octet by octet from `p.pos`, then rules 7–9 at the empty line. `input`
/// starts with the request line.
#[inline(always)]
fn head(input: &[u8], p: &mut Progress) -> Parse {
    use Reject::{BadRequest, FieldsTooLarge, UriTooLong, VersionNotSupported};
    let len = input.len();
    let mut pos = p.pos as usize;
    // The state lives in a register while the pass runs; stored when input runs out.
    let mut state = p.state;
    // Rule 6: the last octet the field section may reach (set with `fields_start`).
    let mut section_end = p.fields_start as usize + MAX_FIELD_SECTION;
    // The octets of the line end at `pos` (CR LF or LF), or out of the state loop when
    // the input ends after a CR (rule 2: a CR followed by anything else is 400).
    macro_rules! line_end {
        ($partial:lifetime) => {
            match input[pos] {
                b'\n' => 1,
                _ => match input.get(pos + 1) {
                    Some(b'\n') => 2,
                    Some(_) => return Parse::Error(BadRequest),
                    None => break $partial,
                },
            }
        };
    }
    // Rule 3 (request line) and rule 6 (field section) limits on what has been consumed.
    macro_rules! within_request_line {
        () => {
            if pos > MAX_REQUEST_LINE {
                return Parse::Error(UriTooLong);
            }
        };
    }
    macro_rules! within_field_section {
        () => {
            if pos > section_end {
                return Parse::Error(FieldsTooLarge);
            }
        };
    }
    // The states in the order a head goes through them, the field line's in a loop: each
    // is entered from the one before, or first when the pass resumes there.
    'partial: {
        if state == State::Method {
            if pos == 0 && input.starts_with(b"GET ") {
                pos = 3; // the commonest method, recognised at once
            }
            while pos < len && is(input[pos], TCHAR) {
                pos += 1;
            }
            within_request_line!();
            if pos == len {
                break 'partial;
            }
            if input[pos] != b' ' || pos == 0 {
                return Parse::Error(BadRequest);
            }
            p.method_end = pos as u32;
            pos += 1;
            state = State::Target;
        }
        if state == State::Target {
            while pos < len && is(input[pos], VCHAR) {
                pos += 1;
            }
            within_request_line!();
            if pos == len {
                break 'partial;
            }
            if input[pos] != b' ' || pos == p.method_end as usize + 1 {
                return Parse::Error(BadRequest);
            }
            p.target_end = pos as u32;
            pos += 1;
            state = State::Version;
        }
        if state == State::Version {
            // Rule 4: `HTTP/` DIGIT `.` DIGIT, checked octet by octet; `HTTP/1.1` or
            // `HTTP/1.0` followed by a line end is recognised at once.
            let start = p.target_end as usize + 1;
            // One compare of eight octets: `HTTP/1.0` and `HTTP/1.1` differ only in the
            // lowest bit of the last ('0' is 0x30, '1' is 0x31).
            let word = input.get(pos..pos + 8).map(|v| u64::from_le_bytes(v.try_into().expect("eight octets")));
            if pos == start
                && let Some(word) = word
                && word | 1 << 56 == u64::from_le_bytes(*b"HTTP/1.1")
                && matches!(input.get(pos + 8), Some(b'\r' | b'\n'))
            {
                pos += 8;
                within_request_line!();
                p.http10 = word >> 56 == u64::from(b'0');
                pos += line_end!('partial);
            } else {
                while pos < len {
                    let b = input[pos];
                    let fits = match pos - start {
                        i @ 0..=4 => b == b"HTTP/"[i],
                        5 | 7 => b.is_ascii_digit(),
                        6 => b == b'.',
                        _ => false,
                    };
                    if !fits {
                        break;
                    }
                    pos += 1;
                }
                within_request_line!();
                if pos == len {
                    break 'partial;
                }
                if pos - start != 8 || !matches!(input[pos], b'\r' | b'\n') {
                    return Parse::Error(BadRequest);
                }
                let end = line_end!('partial); // rule 2 before rule 4
                p.http10 = match (input[start + 5], input[start + 7]) {
                    (b'1', b'1') => false,
                    (b'1', b'0') => true,
                    _ => return Parse::Error(VersionNotSupported),
                };
                pos += end;
            }
            p.fields_start = pos as u32;
            section_end = pos + MAX_FIELD_SECTION;
            state = State::LineStart;
        }
        loop {
            if state == State::LineStart {
                if pos == len {
                    break 'partial;
                }
                match input[pos] {
                    b'\r' | b'\n' => {
                        pos += line_end!('partial);
                        within_field_section!();
                        return complete(input, p, pos);
                    }
                    b if is(b, TCHAR) => {
                        p.line_start = pos as u32;
                        state = State::Name;
                        // The commonest field, recognised at once (`Host:` in any case).
                        if let Some(&[h, o, s, t, b':']) = input.get(pos..pos + 5)
                            && u32::from_le_bytes([h, o, s, t]) | 0x2020_2020 == u32::from_le_bytes(*b"host")
                        {
                            p.field = Field::Host;
                            pos += 5;
                            state = State::ValueStart;
                        }
                    }
                    // SP/HTAB: obs-fold (rule 5); anything else cannot start a name.
                    _ => return Parse::Error(BadRequest),
                }
            }
            if state == State::Name {
                while pos < len && is(input[pos], TCHAR) {
                    pos += 1;
                }
                within_field_section!();
                if pos == len {
                    break 'partial;
                }
                // Whitespace before the colon is 400 (rule 5), like any non-token octet.
                if input[pos] != b':' {
                    return Parse::Error(BadRequest);
                }
                p.field = field_kind(&input[p.line_start as usize..pos]);
                pos += 1;
                state = State::ValueStart;
            }
            if state == State::ValueStart {
                while pos < len && matches!(input[pos], b' ' | b'\t') {
                    pos += 1;
                }
                within_field_section!();
                if pos == len {
                    break 'partial;
                }
                p.value_start = pos as u32;
                state = State::Value;
            }
            if state == State::Value {
                // A Host value that is the connection's last valid one, from its first octet
                // to the line end: its octets were checked when it was remembered (rules 5
                // and 7), and are only compared now, a word at a time. (A value resumed in
                // its middle is scanned and checked whole, below.)
                let memo = usize::from(p.memo.len);
                let known_host = p.field == Field::Host
                    && pos == p.value_start as usize
                    && matches!(input.get(pos + memo), Some(b'\r' | b'\n'))
                    && p.memo.holds(&input[pos..pos + memo]);
                pos = if known_host { pos + memo } else { skip_field_value(input, pos) };
                within_field_section!();
                if pos == len {
                    break 'partial;
                }
                if !matches!(input[pos], b'\r' | b'\n') {
                    return Parse::Error(BadRequest); // a control octet or DEL (rule 5)
                }
                let end = line_end!('partial);
                p.field_lines += 1;
                if p.field_lines > MAX_FIELD_LINES {
                    return Parse::Error(FieldsTooLarge);
                }
                if known_host {
                    p.facts.host_lines = p.facts.host_lines.saturating_add(1);
                } else {
                    let value_start = p.value_start as usize;
                    let mut value_end = pos;
                    while value_end > value_start && matches!(input[value_end - 1], b' ' | b'\t') {
                        value_end -= 1; // trailing OWS (the leading was skipped)
                    }
                    note_field(p, &input[value_start..value_end], value_end);
                }
                pos += end;
                within_field_section!();
                state = State::LineStart;
            }
        }
    }
    p.pos = pos as u32;
    p.state = state;
    Parse::Partial { empty_lines: 0 }
}

/// The end of the run of field-value octets (rule 5) at `input[pos..]`: eight at a time
/// while no octet of a word is below 0x20 or DEL, then one at a time from the first that
/// is (an HTAB is valid and passed; the line's CR or LF ends the run).
#[inline]
fn skip_field_value(input: &[u8], mut pos: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while let Some(word) = input.get(pos..pos + 8) {
        let x = u64::from_le_bytes(word.try_into().expect("eight octets"));
        // Octets below 0x20, and octets equal to 0x7F; in each mask the lowest flagged
        // octet is exact (borrows only run towards later octets).
        let control = x.wrapping_sub(0x20 * ONES) & !x & HIGHS;
        let del = (x ^ (0x7f * ONES)).wrapping_sub(ONES) & !(x ^ (0x7f * ONES)) & HIGHS;
        let flagged = control | del;
        if flagged != 0 {
            pos += flagged.trailing_zeros() as usize / 8;
            break;
        }
        pos += 8;
    }
    while pos < input.len() && is(input[pos], FIELD_VALUE) {
        pos += 1;
    }
    pos
}

/// Which field a name is, for rules 7 and 8 and SPEC §7.1 (case-insensitive).
fn field_kind(name: &[u8]) -> Field {
    // A token octet ORed with 0x20 equals a lowercase letter or `-` only if it is that
    // letter in either case, or `-`: a case-insensitive compare for these names.
    let named = |lower: &[u8]| name.iter().zip(lower).all(|(&b, &l)| b | 0x20 == l);
    match name.len() {
        4 if u32::from_le_bytes([name[0], name[1], name[2], name[3]]) | 0x2020_2020 == u32::from_le_bytes(*b"host") => {
            Field::Host
        }
        6 if named(b"expect") => Field::Expect,
        10 if named(b"connection") => Field::Connection,
        14 if named(b"content-length") => Field::ContentLength,
        17 if named(b"transfer-encoding") => Field::TransferEncoding,
        _ => Field::Other,
    }
}

/// Record what the field line just read says; `value` (OWS trimmed) ends at `value_end`.
fn note_field(p: &mut Progress, value: &[u8], value_end: usize) {
    let facts = &mut p.facts;
    match p.field {
        Field::Other => {}
        Field::Host => {
            facts.host_lines = facts.host_lines.saturating_add(1);
            if !p.memo.holds(value) {
                if is_valid_host(value) {
                    p.memo.keep(value);
                } else {
                    facts.bad_host = true;
                }
            }
        }
        Field::ContentLength => {
            facts.content_length_lines = facts.content_length_lines.saturating_add(1);
            facts.content_length = parse_content_length(value);
        }
        Field::TransferEncoding => {
            facts.transfer_encoding_lines = facts.transfer_encoding_lines.saturating_add(1);
            facts.transfer_encoding = ((value_end - value.len()) as u32, value_end as u32);
        }
        Field::Connection => {
            for token in value.split(|&b| b == b',').map(trim_ows) {
                facts.close |= token.eq_ignore_ascii_case(b"close");
                facts.keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        }
        Field::Expect => facts.expect_continue = value.eq_ignore_ascii_case(b"100-continue"),
    }
}

/// Rules 7–9 on a head that passed rules 1–6; it is `input[..head_len]`.
fn complete(input: &[u8], p: &Progress, head_len: usize) -> Parse {
    match interpret(input, p, head_len) {
        Ok(request) => Parse::Complete(request),
        Err(reject) => Parse::Error(reject),
    }
}

#[inline(always)]
fn interpret(input: &[u8], p: &Progress, head_len: usize) -> Result<Request, Reject> {
    let facts = &p.facts;
    let http10 = p.http10;
    // Rule 7: exactly one Host on HTTP/1.1, at most one on HTTP/1.0, each well-formed.
    if facts.bad_host || facts.host_lines > 1 || (!http10 && facts.host_lines == 0) {
        return Err(Reject::BadRequest);
    }
    // Rule 8 (nothing to check in the commonest head, without framing fields).
    let lengths = facts.content_length_lines;
    let chunked = match facts.transfer_encoding_lines {
        0 if lengths == 0 => false,
        _ if lengths > 1 || (lengths == 1 && facts.content_length.is_none()) => return Err(Reject::BadRequest),
        0 => false,
        _ if lengths > 0 || http10 || facts.transfer_encoding_lines > 1 => return Err(Reject::BadRequest),
        _ => {
            let (start, end) = facts.transfer_encoding;
            check_transfer_codings(&input[start as usize..end as usize])?;
            true
        }
    };
    let content_length = facts.content_length.unwrap_or(0);
    // Rule 9.
    let method = &input[..p.method_end as usize];
    let target = &input[p.method_end as usize + 1..p.target_end as usize];
    let (path, query) = if target == b"/" { (target, None) } else { split_target(target)? };
    let readable = method == b"GET" || method == b"HEAD";
    let route = match path {
        b"/" if readable => Route::Redirect { seed: query.and_then(seed::seed_in_query) },
        b"/healthz" if readable => Route::Health,
        b"/" | b"/healthz" => Route::MethodNotAllowed,
        b"/metrics" => Route::Metrics { readable },
        _ => Route::NotFound,
    };
    Ok(Request {
        head_len,
        route,
        head_method: method == b"HEAD",
        http10,
        keep_alive: !facts.close && (!http10 || facts.keep_alive),
        content_length,
        chunked,
        expect_continue: facts.expect_continue && !http10 && content_length > 0,
    })
}

/// SPEC §5 rule 8 on a `Transfer-Encoding` value: the last coding is `chunked`, no
/// element is empty; codings before it are not implemented.
fn check_transfer_codings(value: &[u8]) -> Result<(), Reject> {
    let mut count = 0;
    let mut last: &[u8] = b"";
    for coding in value.split(|&b| b == b',').map(trim_ows) {
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

/// The path and the query (after the first `?`) of an origin-form or absolute-form target
/// (SPEC §2); any other form is 400. An absolute-form target with no path has the path
/// "/" (RFC 9110 §4.2.3).
fn split_target(target: &[u8]) -> Result<(&[u8], Option<&[u8]>), Reject> {
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
    let (path, query) = match path_and_query.iter().position(|&b| b == b'?') {
        Some(mark) => (&path_and_query[..mark], Some(&path_and_query[mark + 1..])),
        None => (path_and_query, None),
    };
    Ok((if path.is_empty() { b"/" } else { path }, query))
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

/// SPEC §5 rule 7: empty, or `host [":" port]` with host a reg-name/IPv4 (unreserved,
/// sub-delims, `%`) or an IP-literal in brackets (unreserved, sub-delims, `:`), port
/// digits. One pass.
fn is_valid_host(value: &[u8]) -> bool {
    let host_end = if value.first() == Some(&b'[') {
        let mut i = 1;
        while i < value.len() && (value[i] == b':' || (value[i] != b'%' && is(value[i], HOST))) {
            i += 1;
        }
        if i == 1 || value.get(i) != Some(&b']') {
            return false;
        }
        i + 1
    } else {
        let mut i = 0;
        while i < value.len() && is(value[i], HOST) {
            i += 1;
        }
        i
    };
    match &value[host_end..] {
        [] => true,
        [b':', port @ ..] => port.iter().all(u8::is_ascii_digit),
        _ => false,
    }
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
