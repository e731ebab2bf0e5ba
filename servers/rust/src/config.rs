//! Configuration (SPEC §1): flags, `RENARD_*` variables, defaults. A flag wins over its
//! variable, a variable over the default; an empty variable is unset. Every error is one
//! line naming the flag (or variable) and the reason; the caller prints it, exits 2.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

/// A validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// N: k is drawn from 1..=N.
    pub count: u32,
    /// Location template: visible ASCII, holds `{n}`.
    pub location: Vec<u8>,
    /// Event-loop threads.
    pub threads: usize,
    /// Absolute deadline for a request head.
    pub header_timeout: Duration,
    /// Idle connection / stalled response limit.
    pub idle_timeout: Duration,
    /// Open connections allowed across all threads.
    pub max_connections: usize,
    /// Longest drain after SIGTERM/SIGINT (SPEC §7.6; the window is the lesser of this
    /// and `header_timeout`); zero is allowed.
    pub drain_timeout: Duration,
}

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Serve with this configuration.
    Serve(Config),
    /// Print [`USAGE`] to stdout, exit 0.
    Help,
    /// Print `renard VERSION`, exit 0.
    Version,
}

/// The `--help` text.
pub const USAGE: &str = "\
usage: renard [--flag VALUE | --flag=VALUE]...

Answers GET / with a 302 redirect to TEMPLATE with {n} replaced by k in 1..N
(uniform, or FNV-1a-64 of ?seed=S mod N + 1).

  --listen HOST:PORT       RENARD_LISTEN           default 127.0.0.1:8080 (IPv6: [ADDR]:PORT)
  --count N                RENARD_COUNT            default 21 (1 to 1000000)
  --location TEMPLATE      RENARD_LOCATION         default https://avatar.example.org/Renard-{n}.png
  --threads N              RENARD_THREADS          default: CPUs available (1 to 1024)
  --header-timeout S       RENARD_HEADER_TIMEOUT   default 10 (seconds, > 0, <= 86400)
  --idle-timeout S         RENARD_IDLE_TIMEOUT     default 60 (seconds, > 0, <= 86400)
  --max-connections N      RENARD_MAX_CONNECTIONS  default 10000 (1 to 1000000)
  --drain-timeout S        RENARD_DRAIN_TIMEOUT    default 1 (seconds, >= 0, <= 86400)
  --help                   print this text
  --version                print the version
";

/// The flags that take a value, with their variables.
const FLAGS: [(&str, &str); 8] = [
    ("--listen", "RENARD_LISTEN"),
    ("--count", "RENARD_COUNT"),
    ("--location", "RENARD_LOCATION"),
    ("--threads", "RENARD_THREADS"),
    ("--header-timeout", "RENARD_HEADER_TIMEOUT"),
    ("--idle-timeout", "RENARD_IDLE_TIMEOUT"),
    ("--max-connections", "RENARD_MAX_CONNECTIONS"),
    ("--drain-timeout", "RENARD_DRAIN_TIMEOUT"),
];

/// Read the command line `args` (without the program name), the variables through
/// `var`, and default `--threads` to `cpus`. Err is the whole stderr line.
pub fn parse(
    args: impl IntoIterator<Item = OsString>,
    var: impl Fn(&str) -> Option<OsString>,
    cpus: usize,
) -> Result<Command, String> {
    // The flags given, by name; a later one wins.
    let mut given: Vec<(&'static str, OsString)> = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let bytes = arg.as_bytes();
        if bytes == b"--help" {
            return Ok(Command::Help);
        }
        if bytes == b"--version" {
            return Ok(Command::Version);
        }
        if !bytes.starts_with(b"--") {
            return Err(format!(
                "renard: {}: unexpected argument (renard takes only flags; see --help)",
                quoted(bytes)
            ));
        }
        let (name, inline_value) = match bytes.iter().position(|&b| b == b'=') {
            Some(eq) => (&bytes[..eq], Some(OsString::from(std::ffi::OsStr::from_bytes(&bytes[eq + 1..])))),
            None => (bytes, None),
        };
        let name = String::from_utf8_lossy(name);
        let Some(&(flag, _)) = FLAGS.iter().find(|(flag, _)| *flag == name) else {
            return Err(format!("renard: {name}: unknown flag (see --help)"));
        };
        let value = match inline_value.or_else(|| args.next()) {
            Some(value) => value,
            None => return Err(format!("renard: {name}: missing value")),
        };
        given.push((flag, value));
    }
    // The value of `flag`: given, else its non-empty variable, else None; with the name
    // to blame. `flag` is one of FLAGS (the defaults test reads every one).
    let source = |flag: &str| -> Option<(&'static str, OsString)> {
        let &(flag, variable) = FLAGS.iter().find(|(f, _)| *f == flag).expect("a flag of FLAGS");
        match given.iter().rev().find(|(f, _)| *f == flag) {
            Some((_, value)) => Some((flag, value.clone())),
            None => var(variable).filter(|v| !v.is_empty()).map(|v| (variable, v)),
        }
    };
    Ok(Command::Serve(Config {
        listen: value(source("--listen"), "127.0.0.1:8080".parse().unwrap(), parse_listen)?,
        count: value(source("--count"), 21, |v| parse_integer(v, 1_000_000).map(|n| n as u32))?,
        location: value(source("--location"), b"https://avatar.example.org/Renard-{n}.png".to_vec(), parse_location)?,
        threads: value(source("--threads"), cpus.clamp(1, 1024), |v| parse_integer(v, 1024))?,
        header_timeout: value(source("--header-timeout"), Duration::from_secs(10), parse_positive_seconds)?,
        idle_timeout: value(source("--idle-timeout"), Duration::from_secs(60), parse_positive_seconds)?,
        max_connections: value(source("--max-connections"), 10_000, |v| parse_integer(v, 1_000_000))?,
        drain_timeout: value(source("--drain-timeout"), Duration::from_secs(1), parse_seconds)?,
    }))
}

/// The parsed `source`, or `default` when there is none; Err is the stderr line.
fn value<T>(
    source: Option<(&str, OsString)>,
    default: T,
    parse: impl Fn(&[u8]) -> Result<T, String>,
) -> Result<T, String> {
    match source {
        None => Ok(default),
        Some((name, raw)) => {
            parse(raw.as_bytes()).map_err(|reason| format!("renard: {name}: {reason} (got {})", quoted(raw.as_bytes())))
        }
    }
}

/// `s` in double quotes, with anything unprintable escaped.
fn quoted(s: &[u8]) -> String {
    format!("\"{}\"", s.escape_ascii())
}

fn parse_listen(v: &[u8]) -> Result<SocketAddr, String> {
    const REASON: &str = "must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535";
    std::str::from_utf8(v).ok().and_then(|s| s.parse().ok()).ok_or_else(|| REASON.to_string())
}

/// A decimal integer from 1 to `max`, digits only.
fn parse_integer(v: &[u8], max: usize) -> Result<usize, String> {
    let reason = || format!("must be an integer from 1 to {max}");
    if v.is_empty() || v.len() > 9 || !v.iter().all(u8::is_ascii_digit) {
        return Err(reason());
    }
    let n = v.iter().fold(0usize, |n, &d| n * 10 + usize::from(d - b'0'));
    if (1..=max).contains(&n) { Ok(n) } else { Err(reason()) }
}

/// Decimal seconds `DIGITS[.DIGITS]`, > 0 and <= 86400 (a positive value below a
/// nanosecond counts as one nanosecond).
fn parse_positive_seconds(v: &[u8]) -> Result<Duration, String> {
    const REASON: &str = "must be a decimal number of seconds greater than 0 and at most 86400";
    decimal_seconds(v).filter(|d| !d.is_zero()).ok_or_else(|| REASON.to_string())
}

/// Decimal seconds `DIGITS[.DIGITS]`, >= 0 and <= 86400.
fn parse_seconds(v: &[u8]) -> Result<Duration, String> {
    decimal_seconds(v).ok_or_else(|| "must be a decimal number of seconds from 0 to 86400".to_string())
}

/// `DIGITS[.DIGITS]` at most 86400 s, as a duration; a positive value that rounds to zero
/// nanoseconds gives 1 ns, so that only an exact zero is zero.
fn decimal_seconds(v: &[u8]) -> Option<Duration> {
    let (whole, fraction) = match v.iter().position(|&b| b == b'.') {
        Some(dot) => (&v[..dot], &v[dot + 1..]),
        None => (v, &v[v.len()..]),
    };
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if whole.is_empty()
        || whole.len() > 5
        || !digits(whole)
        || !digits(fraction)
        || (fraction.is_empty() && v.len() != whole.len())
    {
        return None;
    }
    let secs = whole.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    // Nanoseconds from the first nine fraction digits; later digits are below resolution.
    let nanos = (0..9).fold(0u32, |n, i| n * 10 + fraction.get(i).map_or(0, |&d| u32::from(d - b'0')));
    let duration = Duration::new(secs, nanos);
    let exactly_zero = secs == 0 && fraction.iter().all(|&d| d == b'0');
    if duration > Duration::from_secs(86_400) {
        return None;
    }
    Some(if duration.is_zero() && !exactly_zero { Duration::from_nanos(1) } else { duration })
}

/// 1 to 2048 octets in 0x21..=0x7E, with `{n}` at least once.
fn parse_location(v: &[u8]) -> Result<Vec<u8>, String> {
    if v.is_empty() || v.len() > 2048 {
        return Err("must be 1 to 2048 octets long".to_string());
    }
    if !v.iter().all(|&b| (0x21..=0x7e).contains(&b)) {
        return Err("must be visible ASCII only (0x21-0x7E: no space, no control octets)".to_string());
    }
    if !v.windows(3).any(|w| w == b"{n}") {
        return Err("must contain {n}".to_string());
    }
    Ok(v.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str], vars: &[(&str, &str)]) -> Result<Command, String> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        parse(args.iter().map(OsString::from), |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.into()), 2)
    }

    fn config(args: &[&str], vars: &[(&str, &str)]) -> Config {
        match run(args, vars) {
            Ok(Command::Serve(config)) => config,
            other => panic!("expected a configuration, got {other:?}"),
        }
    }

    fn error(args: &[&str], vars: &[(&str, &str)]) -> String {
        run(args, vars).expect_err("expected an error")
    }

    #[test]
    fn defaults_apply_without_flags() {
        let c = config(&[], &[]);
        assert_eq!(
            (c.listen.to_string(), c.count, c.threads, c.max_connections),
            ("127.0.0.1:8080".into(), 21, 2, 10_000)
        );
        assert_eq!((c.header_timeout, c.idle_timeout), (Duration::from_secs(10), Duration::from_secs(60)));
    }
    #[test]
    fn count_error_matches_spec_example() {
        assert_eq!(error(&["--count", "0"], &[]), "renard: --count: must be an integer from 1 to 1000000 (got \"0\")")
    }
    #[test]
    fn equals_form_is_accepted() {
        assert_eq!(config(&["--count=5"], &[]).count, 5)
    }
    #[test]
    fn flag_wins_over_variable() {
        assert_eq!(config(&["--count", "5"], &[("RENARD_COUNT", "7")]).count, 5)
    }
    #[test]
    fn variable_wins_over_default() {
        assert_eq!(config(&[], &[("RENARD_COUNT", "7")]).count, 7)
    }
    #[test]
    fn empty_variable_is_unset() {
        assert_eq!(config(&[], &[("RENARD_COUNT", "")]).count, 21)
    }
    #[test]
    fn bad_variable_is_named() {
        assert!(error(&[], &[("RENARD_THREADS", "x")]).starts_with("renard: RENARD_THREADS: "))
    }
    #[test]
    fn ipv6_listen_is_accepted() {
        assert_eq!(config(&["--listen", "[::1]:0"], &[]).listen.to_string(), "[::1]:0")
    }
    #[test]
    fn hostname_listen_is_refused() {
        assert!(error(&["--listen", "localhost:80"], &[]).starts_with("renard: --listen: "))
    }
    #[test]
    fn port_above_65535_is_refused() {
        assert!(error(&["--listen", "127.0.0.1:65536"], &[]).starts_with("renard: --listen: "))
    }
    #[test]
    fn count_above_million_is_refused() {
        assert!(error(&["--count", "1000001"], &[]).starts_with("renard: --count: "))
    }
    #[test]
    fn count_of_million_is_accepted() {
        assert_eq!(config(&["--count", "1000000"], &[]).count, 1_000_000)
    }
    #[test]
    fn signed_count_is_refused() {
        assert!(error(&["--count", "+5"], &[]).starts_with("renard: --count: "))
    }
    #[test]
    fn threads_above_1024_are_refused() {
        assert!(error(&["--threads", "1025"], &[]).starts_with("renard: --threads: "))
    }
    #[test]
    fn max_connections_of_zero_is_refused() {
        assert!(error(&["--max-connections", "0"], &[]).starts_with("renard: --max-connections: "))
    }
    #[test]
    fn location_without_placeholder_is_refused() {
        assert!(error(&["--location", "https://a/x.png"], &[]).contains("must contain {n}"))
    }
    #[test]
    fn location_with_space_is_refused() {
        assert!(error(&["--location", "https://a/ {n}"], &[]).starts_with("renard: --location: "))
    }
    #[test]
    fn location_of_2049_octets_is_refused() {
        assert!(error(&["--location", &format!("{{n}}{}", "a".repeat(2046))], &[]).starts_with("renard: --location: "))
    }
    #[test]
    fn location_of_2048_octets_is_accepted() {
        assert_eq!(config(&["--location", &format!("{{n}}{}", "a".repeat(2045))], &[]).location.len(), 2048)
    }
    #[test]
    fn decimal_timeout_is_accepted() {
        assert_eq!(config(&["--header-timeout", "0.25"], &[]).header_timeout, Duration::from_millis(250))
    }
    #[test]
    fn zero_timeout_is_refused() {
        assert!(error(&["--idle-timeout", "0"], &[]).starts_with("renard: --idle-timeout: "))
    }
    #[test]
    fn timeout_above_a_day_is_refused() {
        assert!(error(&["--idle-timeout", "86400.5"], &[]).starts_with("renard: --idle-timeout: "))
    }
    #[test]
    fn timeout_of_a_day_is_accepted() {
        assert_eq!(config(&["--idle-timeout", "86400"], &[]).idle_timeout, Duration::from_secs(86_400))
    }
    #[test]
    fn exponent_timeout_is_refused() {
        assert!(error(&["--header-timeout", "1e3"], &[]).starts_with("renard: --header-timeout: "))
    }
    #[test]
    fn drain_timeout_defaults_to_one_second() {
        assert_eq!(config(&[], &[]).drain_timeout, Duration::from_secs(1))
    }
    #[test]
    fn zero_drain_timeout_is_accepted() {
        assert_eq!(config(&["--drain-timeout", "0"], &[]).drain_timeout, Duration::ZERO)
    }
    #[test]
    fn decimal_drain_timeout_is_accepted() {
        assert_eq!(config(&["--drain-timeout=0.5"], &[]).drain_timeout, Duration::from_millis(500))
    }
    #[test]
    fn drain_timeout_variable_is_read() {
        assert_eq!(config(&[], &[("RENARD_DRAIN_TIMEOUT", "2")]).drain_timeout, Duration::from_secs(2))
    }
    #[test]
    fn negative_drain_timeout_is_refused() {
        assert_eq!(
            error(&["--drain-timeout", "-1"], &[]),
            "renard: --drain-timeout: must be a decimal number of seconds from 0 to 86400 (got \"-1\")"
        )
    }
    #[test]
    fn drain_timeout_above_a_day_is_refused() {
        assert!(error(&[], &[("RENARD_DRAIN_TIMEOUT", "86401")]).starts_with("renard: RENARD_DRAIN_TIMEOUT: "))
    }
    #[test]
    fn unknown_flag_is_named() {
        assert!(error(&["--bogus"], &[]).starts_with("renard: --bogus: unknown flag"))
    }
    #[test]
    fn missing_value_is_named() {
        assert_eq!(error(&["--count"], &[]), "renard: --count: missing value")
    }
    #[test]
    fn positional_argument_is_refused() {
        assert!(error(&["serve"], &[]).starts_with("renard: \"serve\": unexpected argument"))
    }
    #[test]
    fn help_is_recognised() {
        assert_eq!(run(&["--help"], &[]), Ok(Command::Help))
    }
    #[test]
    fn version_is_recognised() {
        assert_eq!(run(&["--version"], &[]), Ok(Command::Version))
    }
    #[test]
    fn errors_are_one_line() {
        assert!(!error(&["--location", "a\nb"], &[]).contains('\n'))
    }
}
