//! Configuration (SPEC §1, §8): flags, `RENARD_*` variables, the `--config` file,
//! defaults. A flag wins over the file's line, the file over the variable, a variable over
//! the default; an empty variable is unset. Every error is one line naming the flag (or
//! variable, or file and variable) and the reason; the caller prints it, exits 2.

use std::ffi::{OsStr, OsString};
use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Where to listen: a TCP address (port 0 picks a free port) or a Unix socket's path.
    pub listen: Listen,
    /// The Unix socket file's permission bits (`--socket-mode`, octal; Unix sockets only).
    pub socket_mode: u32,
    /// Who owns the Unix socket file (`--socket-owner USER[:GROUP]`), when asked.
    pub socket_owner: Option<Owner>,
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
    /// Answer `GET /metrics` (SPEC §8).
    pub metrics: bool,
    /// Where N was counted from, when it was (SPEC §8, `--count-from`).
    pub count_from: Option<PathBuf>,
}

/// Where renard listens (`--listen`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// `A.B.C.D:PORT` or `[IPv6]:PORT`.
    Tcp(SocketAddr),
    /// `unix:PATH`: a Unix stream socket at PATH.
    Unix(PathBuf),
}

impl std::fmt::Display for Listen {
    /// As written on the command line: `127.0.0.1:8080`, `unix:/run/renard/renard.sock`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Tcp(addr) => write!(f, "{addr}"),
            Listen::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

/// The owner given to a Unix socket file: user and group ids, and the value as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub uid: u32,
    /// None: the file's group is left as created.
    pub gid: Option<u32>,
    pub spec: String,
}

/// The longest Unix socket path, in octets (`sun_path` holds 108 with the final NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Serve with this configuration.
    Serve(Config),
    /// Print [`USAGE`] to stdout, exit 0.
    Help,
    /// Print [`VERSION`], exit 0.
    Version,
    /// Send one `GET path` to `addr`, exit 0 on a 200 (SPEC §8, `--check`).
    Check { addr: SocketAddr, path: Vec<u8> },
}

/// The `--version` line: the crate's version and the commit it was built from (12 hex
/// digits, or `unknown` outside git; `build.rs`).
pub const VERSION: &str = concat!("renard ", env!("CARGO_PKG_VERSION"), " (commit ", env!("RENARD_COMMIT"), ")");

/// The `--help` text (help2man makes the man page from it: a `Usage:` line, then option
/// lines starting with `-`, each with its variable and default).
pub const USAGE: &str = "\
Usage: renard [OPTION]...
  or:  renard --check URL
Answer GET / with a 302 redirect to one of N avatar images: the --location
template with {n} replaced by k, drawn uniformly from 1..N, or for /?seed=S
the same k for the same S (FNV-1a-64 of S, mod N, plus 1).

Each option is written --name VALUE or --name=VALUE, and may be set instead by
the environment variable named with it: the option wins over the variable, and
an empty variable is unset.

Options:
      --listen ADDR          where to listen: A.B.C.D:PORT or [IPv6]:PORT
                             (PORT 0: any free port), or unix:PATH for a Unix
                             socket (a stale socket file there is replaced);
                             variable RENARD_LISTEN, default 127.0.0.1:8080
      --socket-mode OCTAL    the unix:PATH socket file's permissions, 000 to
                             777; variable RENARD_SOCKET_MODE, default 660
      --socket-owner USER[:GROUP]
                             give the unix:PATH socket file to USER (and
                             GROUP), names or numbers (needs privilege);
                             variable RENARD_SOCKET_OWNER, default unchanged
      --count N              N, the number of images, 1 to 1000000; variable
                             RENARD_COUNT, default 21
      --location TEMPLATE    the redirect's target, visible ASCII with {n}, at
                             most 2048 octets; variable RENARD_LOCATION,
                             default https://avatar.example.org/Renard-{n}.png
      --count-from DIR       N = how many of the images named by the template's
                             last path segment, {n} = 1, 2, ..., are in DIR, up
                             to the first missing one (instead of --count);
                             variable RENARD_COUNT_FROM, default none
      --config FILE          a file of RENARD_COUNT=, RENARD_LOCATION= and
                             RENARD_COUNT_FROM= lines, stronger than the
                             variables, weaker than the options; variable
                             RENARD_CONFIG, default none
      --threads N            event-loop threads, 1 to 1024; variable
                             RENARD_THREADS, default the CPUs available
      --header-timeout S     seconds to receive a request head, > 0, at most
                             86400; variable RENARD_HEADER_TIMEOUT, default 10
      --idle-timeout S       seconds an idle or stalled connection is kept, > 0,
                             at most 86400; variable RENARD_IDLE_TIMEOUT,
                             default 60
      --max-connections N    open connections, 1 to 1000000 (at the cap the
                             least useful one is closed for a newcomer);
                             variable RENARD_MAX_CONNECTIONS, default 10000
      --drain-timeout S      seconds of serving after SIGTERM, 0 to 86400;
                             variable RENARD_DRAIN_TIMEOUT, default 1
      --metrics              answer GET /metrics in the Prometheus text format;
                             variable RENARD_METRICS (1 on, 0 off), default off
      --check URL            send GET for http://HOST:PORT/PATH (numeric host),
                             exit 0 on a 200, else 1; reads no other option
  -h, --help                 print this help and exit
  -V, --version              print the version and the commit, and exit

Signals:
  SIGHUP                     read --config again and recount --count-from (N and
                             the template only; the rest needs a restart)
  SIGTERM, SIGINT            stop accepting, serve what is open with Connection:
                             close for the drain time, then exit 0

Environment:
  LISTEN_PID, LISTEN_FDS     systemd socket activation: listen on the socket
                             passed as descriptor 3 (TCP or Unix), not --listen
  NOTIFY_SOCKET              systemd Type=notify: READY=1 once listening,
                             RELOADING=1 then READY=1 around a reload,
                             STOPPING=1 when the drain begins

Exit status:
  0                          stopped by SIGTERM or SIGINT (or --check passed)
  1                          a resource could not be had (the listen address
                             cannot be bound), or --check failed
  2                          a bad option or variable
";

/// The flags, with their variables (`--check` has none, `--metrics` takes no value).
const FLAGS: [(&str, &str); 14] = [
    ("--listen", "RENARD_LISTEN"),
    ("--socket-mode", "RENARD_SOCKET_MODE"),
    ("--socket-owner", "RENARD_SOCKET_OWNER"),
    ("--count", "RENARD_COUNT"),
    ("--location", "RENARD_LOCATION"),
    ("--threads", "RENARD_THREADS"),
    ("--header-timeout", "RENARD_HEADER_TIMEOUT"),
    ("--idle-timeout", "RENARD_IDLE_TIMEOUT"),
    ("--max-connections", "RENARD_MAX_CONNECTIONS"),
    ("--drain-timeout", "RENARD_DRAIN_TIMEOUT"),
    ("--metrics", "RENARD_METRICS"),
    ("--count-from", "RENARD_COUNT_FROM"),
    ("--config", "RENARD_CONFIG"),
    ("--check", ""),
];

/// The variables a `--config` file may set (SPEC §8): the ones a reload changes.
const FILE_VARIABLES: [&str; 3] = ["RENARD_COUNT", "RENARD_LOCATION", "RENARD_COUNT_FROM"];

/// Where a value came from, weakest first: the order in which they override each other.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    Variable,
    File,
    Flag,
}

/// A value and the name to blame for it.
struct Source {
    name: String,
    value: OsString,
    layer: Layer,
}

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
        if bytes == b"--help" || bytes == b"-h" {
            return Ok(Command::Help);
        }
        if bytes == b"--version" || bytes == b"-V" {
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
        if flag == "--metrics" {
            // A switch: `--metrics` alone (SPEC §8).
            if inline_value.is_some() {
                return Err("renard: --metrics: takes no value".to_string());
            }
            given.push((flag, OsString::from("1")));
            continue;
        }
        let value = match inline_value.or_else(|| args.next()) {
            Some(value) => value,
            None => return Err(format!("renard: {name}: missing value")),
        };
        given.push((flag, value));
    }
    let flag_value = |flag: &str| given.iter().rev().find(|(f, _)| *f == flag).map(|(_, v)| v.clone());
    if let Some(url) = flag_value("--check") {
        // The check runs alone: nothing else is read (a container's variables may name
        // things the check does not need, such as an image folder).
        let (addr, path) = parse_check_url(url.as_bytes())
            .map_err(|reason| format!("renard: --check: {reason} (got {})", quoted(url.as_bytes())))?;
        return Ok(Command::Check { addr, path });
    }
    let variable = |name: &str| var(name).filter(|v| !v.is_empty());
    // The --config file's lines, as (variable, value).
    let file = match (flag_value("--config").map(|v| ("--config", v)))
        .or_else(|| variable("RENARD_CONFIG").map(|v| ("RENARD_CONFIG", v)))
    {
        Some((name, path)) => Some((PathBuf::from(path.clone()), read_config_file(Path::new(&path), name)?)),
        None => None,
    };
    // The value of `flag`: given, else the file's line, else its non-empty variable, else
    // None; with the name to blame. `flag` is one of FLAGS (the defaults test reads every one).
    let source = |flag: &str| -> Option<Source> {
        let &(flag, variable_name) = FLAGS.iter().find(|(f, _)| *f == flag).expect("a flag of FLAGS");
        if let Some(value) = flag_value(flag) {
            return Some(Source { name: flag.to_string(), value, layer: Layer::Flag });
        }
        if let Some((path, lines)) = &file
            && let Some((_, value)) = lines.iter().rev().find(|(name, v)| *name == variable_name && !v.is_empty())
        {
            let name = format!("{}: {variable_name}", path.display());
            return Some(Source { name, value: value.clone(), layer: Layer::File });
        }
        variable(variable_name).map(|value| Source { name: variable_name.to_string(), value, layer: Layer::Variable })
    };
    let location = value(source("--location"), b"https://avatar.example.org/Renard-{n}.png".to_vec(), parse_location)?;
    // N: --count or --count-from, whichever the stronger layer gives (SPEC §8: they
    // exclude each other; both in the same layer is an error).
    let (count, count_from) = match (source("--count"), source("--count-from")) {
        (Some(count), Some(from)) if count.layer == from.layer => {
            return Err(format!("renard: {}: cannot be used with {}", from.name, count.name));
        }
        (count, Some(from)) if count.as_ref().is_none_or(|c| c.layer < from.layer) => {
            let dir = PathBuf::from(&from.value);
            let n = count_images(&dir, &location).map_err(|reason| format!("renard: {}: {reason}", from.name))?;
            (n, Some(dir))
        }
        (count, _) => (value(count, 21, |v| parse_integer(v, 1_000_000).map(|n| n as u32))?, None),
    };
    let listen = value(source("--listen"), Listen::Tcp("127.0.0.1:8080".parse().unwrap()), parse_listen)?;
    let (socket_mode, socket_owner) = (source("--socket-mode"), source("--socket-owner"));
    if let Listen::Tcp(_) = listen
        && let Some(given) = socket_mode.as_ref().or(socket_owner.as_ref())
    {
        return Err(format!("renard: {}: applies only to --listen unix:PATH (listening on {listen})", given.name));
    }
    Ok(Command::Serve(Config {
        listen,
        socket_mode: value(socket_mode, 0o660, parse_mode)?,
        socket_owner: socket_owner
            .map(|owner| value(Some(owner), None, |v| parse_owner(v).map(Some)))
            .transpose()?
            .flatten(),
        count,
        location,
        threads: value(source("--threads"), cpus.clamp(1, 1024), |v| parse_integer(v, 1024))?,
        header_timeout: value(source("--header-timeout"), Duration::from_secs(10), parse_positive_seconds)?,
        idle_timeout: value(source("--idle-timeout"), Duration::from_secs(60), parse_positive_seconds)?,
        max_connections: value(source("--max-connections"), 10_000, |v| parse_integer(v, 1_000_000))?,
        drain_timeout: value(source("--drain-timeout"), Duration::from_secs(1), parse_seconds)?,
        metrics: value(source("--metrics"), false, parse_switch)?,
        count_from,
    }))
}

/// The `NAME=VALUE` lines of a `--config` file (SPEC §8); empty lines and lines starting
/// with `#` are skipped (an empty VALUE is unset, as for a variable: the caller skips it). `blame` is the flag or variable that named the file.
fn read_config_file(path: &Path, blame: &str) -> Result<Vec<(&'static str, OsString)>, String> {
    let text = std::fs::read(path).map_err(|e| format!("renard: {blame}: cannot read {}: {e}", path.display()))?;
    let mut lines = Vec::new();
    for (number, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        let at = || format!("renard: {}: line {}", path.display(), number + 1);
        let Some(eq) = line.iter().position(|&b| b == b'=') else {
            return Err(format!("{}: expected NAME=VALUE (got {})", at(), quoted(line)));
        };
        let name = &line[..eq];
        let Some(&variable) = FILE_VARIABLES.iter().find(|v| v.as_bytes() == name) else {
            return Err(format!(
                "{}: {}: not one of RENARD_COUNT, RENARD_LOCATION, RENARD_COUNT_FROM",
                at(),
                quoted(name)
            ));
        };
        lines.push((variable, OsStr::from_bytes(&line[eq + 1..]).to_os_string()));
    }
    Ok(lines)
}

/// N for `--count-from` (SPEC §8): how many of the files named by the template's last
/// path segment with `{n}` = 1, 2, ... exist in `dir`, up to the first missing one.
pub fn count_images(dir: &Path, template: &[u8]) -> Result<u32, String> {
    let path = &template[..template.iter().position(|&b| b == b'?' || b == b'#').unwrap_or(template.len())];
    let segment = &path[path.iter().rposition(|&b| b == b'/').map_or(0, |slash| slash + 1)..];
    if !segment.windows(3).any(|w| w == b"{n}") {
        return Err(format!("the template's last path segment {} holds no {{n}}", quoted(segment)));
    }
    std::fs::read_dir(dir).map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?;
    let pieces = crate::response::split_template(segment);
    let name = |k: u32| {
        let (first, rest) = pieces.split_first().expect("at least one piece");
        let mut name = first.clone();
        for piece in rest {
            name.extend_from_slice(k.to_string().as_bytes());
            name.extend_from_slice(piece);
        }
        dir.join(OsStr::from_bytes(&name))
    };
    let count = (1..=1_000_000).take_while(|&k| name(k).exists()).count() as u32;
    if count == 0 {
        return Err(format!("no image: {} does not exist", name(1).display()));
    }
    Ok(count)
}

/// `--metrics`'s value: `1` on, `0` off (an empty variable is unset: off).
fn parse_switch(v: &[u8]) -> Result<bool, String> {
    match v {
        b"1" => Ok(true),
        b"0" => Ok(false),
        _ => Err("must be 1 (on) or 0 (off)".to_string()),
    }
}

/// `http://HOST:PORT/PATH` with a numeric host (SPEC §8): the address and the path.
fn parse_check_url(v: &[u8]) -> Result<(SocketAddr, Vec<u8>), String> {
    const REASON: &str = "must be http://HOST:PORT/PATH with a numeric host (A.B.C.D or [IPv6])";
    let rest = v.strip_prefix(b"http://").ok_or(REASON)?;
    let slash = rest.iter().position(|&b| b == b'/').ok_or(REASON)?;
    let (authority, path) = rest.split_at(slash);
    let addr = std::str::from_utf8(authority).ok().and_then(|a| a.parse().ok()).ok_or(REASON)?;
    if !path.iter().all(|&b| (0x21..=0x7e).contains(&b)) || path.contains(&b'#') {
        return Err(REASON.to_string());
    }
    Ok((addr, path.to_vec()))
}

/// The parsed `source`, or `default` when there is none; Err is the stderr line.
fn value<T>(source: Option<Source>, default: T, parse: impl Fn(&[u8]) -> Result<T, String>) -> Result<T, String> {
    match source {
        None => Ok(default),
        Some(Source { name, value, .. }) => parse(value.as_bytes())
            .map_err(|reason| format!("renard: {name}: {reason} (got {})", quoted(value.as_bytes()))),
    }
}

/// `s` in double quotes, with anything unprintable escaped.
fn quoted(s: &[u8]) -> String {
    format!("\"{}\"", s.escape_ascii())
}

fn parse_listen(v: &[u8]) -> Result<Listen, String> {
    if let Some(path) = v.strip_prefix(b"unix:") {
        if path.is_empty() || path.len() > MAX_SOCKET_PATH {
            return Err(format!("must be unix:PATH with PATH of 1 to {MAX_SOCKET_PATH} octets"));
        }
        return Ok(Listen::Unix(PathBuf::from(OsStr::from_bytes(path))));
    }
    const REASON: &str = "must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535, or unix:PATH";
    std::str::from_utf8(v).ok().and_then(|s| s.parse().ok()).map(Listen::Tcp).ok_or_else(|| REASON.to_string())
}

/// Permission bits in octal, `000` to `777` (one to four digits: `0660` is `660`).
fn parse_mode(v: &[u8]) -> Result<u32, String> {
    let octal = !v.is_empty() && v.len() <= 4 && v.iter().all(|b| (b'0'..=b'7').contains(b));
    let mode = v.iter().fold(0u32, |m, &d| m * 8 + u32::from(d - b'0'));
    if octal && mode <= 0o777 { Ok(mode) } else { Err("must be an octal mode from 000 to 777".to_string()) }
}

/// `USER[:GROUP]`, each a name known to the system or a number.
fn parse_owner(v: &[u8]) -> Result<Owner, String> {
    let spec = std::str::from_utf8(v).map_err(|_| "must be USER or USER:GROUP".to_string())?;
    let (user, group) = match spec.split_once(':') {
        Some((user, group)) => (user, Some(group)),
        None => (spec, None),
    };
    if user.is_empty() || group == Some("") {
        return Err("must be USER or USER:GROUP".to_string());
    }
    let uid = crate::users::uid(user).ok_or_else(|| format!("no user {user:?} on this system"))?;
    let gid = match group {
        Some(group) => Some(crate::users::gid(group).ok_or_else(|| format!("no group {group:?} on this system"))?),
        None => None,
    };
    Ok(Owner { uid, gid, spec: spec.to_string() })
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
    fn unix_listen_takes_a_path_with_mode_660_and_no_owner() {
        let c = config(&["--listen", "unix:/run/renard/renard.sock"], &[]);
        assert_eq!(c.listen, Listen::Unix("/run/renard/renard.sock".into()));
        assert_eq!((c.socket_mode, c.socket_owner), (0o660, None));
    }
    #[test]
    fn unix_listen_path_of_108_octets_is_refused() {
        let long = format!("unix:/{}", "s".repeat(107));
        assert_eq!(
            error(&["--listen", &long], &[]).split(" (got").next().unwrap(),
            "renard: --listen: must be unix:PATH with PATH of 1 to 107 octets"
        );
        assert!(matches!(config(&["--listen", &long[..long.len() - 1]], &[]).listen, Listen::Unix(_)));
    }
    #[test]
    fn empty_unix_path_is_refused() {
        assert!(error(&["--listen", "unix:"], &[]).starts_with("renard: --listen: must be unix:PATH"))
    }
    #[test]
    fn socket_mode_is_octal() {
        let unix = ["--listen", "unix:/tmp/r.sock"];
        assert_eq!(config(&[&unix[..], &["--socket-mode", "0600"]].concat(), &[]).socket_mode, 0o600);
        assert_eq!(config(&unix, &[("RENARD_SOCKET_MODE", "666")]).socket_mode, 0o666);
        for bad in ["8", "1000", "", "rw", "0o600"] {
            let e = error(&[&unix[..], &["--socket-mode", bad]].concat(), &[]);
            assert!(e.starts_with("renard: --socket-mode: must be an octal mode from 000 to 777"), "{bad}: {e}");
        }
    }
    #[test]
    fn socket_owner_names_are_resolved() {
        let unix = ["--listen", "unix:/tmp/r.sock"];
        let owner = config(&[&unix[..], &["--socket-owner", "root:root"]].concat(), &[]).socket_owner.unwrap();
        assert_eq!((owner.uid, owner.gid, owner.spec.as_str()), (0, Some(0), "root:root"));
        let owner = config(&unix, &[("RENARD_SOCKET_OWNER", "65534")]).socket_owner.unwrap();
        assert_eq!((owner.uid, owner.gid), (65534, None));
        let e = error(&[&unix[..], &["--socket-owner", "no-such-user-here"]].concat(), &[]);
        assert!(e.starts_with("renard: --socket-owner: no user \"no-such-user-here\" on this system"), "{e}");
        let e = error(&[&unix[..], &["--socket-owner", "root:"]].concat(), &[]);
        assert!(e.starts_with("renard: --socket-owner: must be USER or USER:GROUP"), "{e}");
    }
    #[test]
    fn socket_flags_with_a_tcp_listen_are_refused() {
        assert_eq!(
            error(&["--socket-mode", "600"], &[]),
            "renard: --socket-mode: applies only to --listen unix:PATH (listening on 127.0.0.1:8080)"
        );
        assert!(
            error(&[], &[("RENARD_SOCKET_OWNER", "root")]).starts_with("renard: RENARD_SOCKET_OWNER: applies only")
        );
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
    fn short_help_and_version_are_recognised_before_bad_flags() {
        assert_eq!(run(&["-h", "--count", "0"], &[]), Ok(Command::Help));
        assert_eq!(run(&["--bogus=1", "-V"], &[]).unwrap_err(), "renard: --bogus: unknown flag (see --help)");
        assert_eq!(run(&["-V"], &[("RENARD_COUNT", "0")]), Ok(Command::Version));
    }
    #[test]
    fn other_short_options_are_refused() {
        assert!(error(&["-v"], &[]).starts_with("renard: \"-v\": unexpected argument"))
    }
    #[test]
    fn help_names_every_flag_with_its_variable_and_default() {
        for (flag, variable) in FLAGS {
            let line = USAGE.lines().position(|l| l.trim_start().split(' ').next() == Some(flag));
            let line = line.unwrap_or_else(|| panic!("{flag} is not in the help"));
            // The option's own lines: to the next option line or the end of the list.
            let text: String = USAGE
                .lines()
                .skip(line)
                .take_while(|l| !l.is_empty())
                .enumerate()
                .take_while(|(i, l)| *i == 0 || !l.trim_start().starts_with('-'))
                .flat_map(|(_, l)| l.split_whitespace())
                .collect::<Vec<_>>()
                .join(" ");
            if !variable.is_empty() {
                assert!(text.contains(&format!("variable {variable}")), "{flag}: {text}");
                assert!(text.contains("default"), "{flag}: {text}");
            }
        }
        assert!(
            USAGE.starts_with("Usage: renard ")
                && USAGE.contains("\n  -h, --help ")
                && USAGE.contains("\n  -V, --version ")
        );
    }
    #[test]
    fn help_fits_eighty_columns() {
        assert!(USAGE.lines().all(|l| l.len() <= 80), "{}", USAGE.lines().max_by_key(|l| l.len()).unwrap())
    }
    #[test]
    fn version_names_the_release_and_a_commit() {
        let commit = VERSION
            .strip_prefix(concat!("renard ", env!("CARGO_PKG_VERSION"), " (commit "))
            .and_then(|r| r.strip_suffix(')'))
            .expect(VERSION);
        assert!(
            commit == "unknown"
                || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())),
            "{VERSION}"
        );
    }
    #[test]
    fn errors_are_one_line() {
        assert!(!error(&["--location", "a\nb"], &[]).contains('\n'))
    }

    fn check(args: &[&str]) -> Result<Command, String> {
        run(args, &[("RENARD_COUNT_FROM", "/nonexistent")])
    }
    #[test]
    fn check_url_is_read_alone() {
        assert_eq!(
            check(&["--check", "http://127.0.0.1:8080/healthz"]),
            Ok(Command::Check { addr: "127.0.0.1:8080".parse().unwrap(), path: b"/healthz".to_vec() })
        )
    }
    #[test]
    fn check_url_with_ipv6_host_is_read() {
        assert!(matches!(check(&["--check=http://[::1]:1/"]), Ok(Command::Check { .. })))
    }
    #[test]
    fn check_url_with_hostname_is_refused() {
        assert!(error(&["--check", "http://localhost:80/healthz"], &[]).starts_with("renard: --check: must be http://"))
    }
    #[test]
    fn check_url_without_path_is_refused() {
        assert!(error(&["--check", "http://127.0.0.1:80"], &[]).starts_with("renard: --check: "))
    }
    #[test]
    fn check_url_over_https_is_refused() {
        assert!(error(&["--check", "https://127.0.0.1:80/"], &[]).starts_with("renard: --check: "))
    }
    #[test]
    fn metrics_are_off_by_default() {
        assert!(!config(&[], &[]).metrics)
    }
    #[test]
    fn metrics_flag_turns_them_on() {
        assert!(config(&["--metrics"], &[]).metrics)
    }
    #[test]
    fn metrics_variable_turns_them_on_and_off() {
        assert!(config(&[], &[("RENARD_METRICS", "1")]).metrics);
        assert!(!config(&[], &[("RENARD_METRICS", "0")]).metrics);
    }
    #[test]
    fn metrics_flag_with_a_value_is_refused() {
        assert_eq!(error(&["--metrics=1"], &[]), "renard: --metrics: takes no value")
    }
    #[test]
    fn bad_metrics_variable_is_named() {
        assert!(error(&[], &[("RENARD_METRICS", "yes")]).starts_with("renard: RENARD_METRICS: must be 1"))
    }

    /// A fresh directory under the system's temporary one.
    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("renard-config-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
    /// `dir` with Renard-1.png .. Renard-n.png.
    fn images(name: &str, n: u32) -> PathBuf {
        let dir = scratch_dir(name);
        for k in 1..=n {
            std::fs::write(dir.join(format!("Renard-{k}.png")), b"").unwrap();
        }
        dir
    }
    #[test]
    fn count_from_counts_images_up_to_the_first_gap() {
        let dir = images("gap", 5);
        std::fs::write(dir.join("Renard-7.png"), b"").unwrap();
        let c = config(&["--count-from", dir.to_str().unwrap()], &[]);
        assert_eq!((c.count, c.count_from), (5, Some(dir)));
    }
    #[test]
    fn count_from_reads_the_templates_last_segment() {
        let dir = scratch_dir("segment");
        std::fs::write(dir.join("a-1-1.jpg"), b"").unwrap();
        let location = "https://x/img/a-{n}-{n}.jpg?v=1";
        assert_eq!(config(&["--count-from", dir.to_str().unwrap(), "--location", location], &[]).count, 1);
    }
    #[test]
    fn count_from_without_image_is_refused() {
        let dir = scratch_dir("empty");
        let e = error(&[], &[("RENARD_COUNT_FROM", dir.to_str().unwrap())]);
        assert!(e.starts_with("renard: RENARD_COUNT_FROM: no image: "), "{e}");
    }
    #[test]
    fn count_from_missing_directory_is_refused() {
        assert!(error(&["--count-from", "/nonexistent/renard"], &[]).starts_with("renard: --count-from: cannot read"))
    }
    #[test]
    fn count_from_with_placeholder_outside_last_segment_is_refused() {
        let dir = images("outside", 1);
        let e = error(&["--count-from", dir.to_str().unwrap(), "--location", "https://x/{n}/a.png"], &[]);
        assert!(e.contains("holds no {n}"), "{e}");
    }
    #[test]
    fn count_and_count_from_flags_exclude_each_other() {
        let dir = images("both", 2);
        let e = error(&["--count", "3", "--count-from", dir.to_str().unwrap()], &[]);
        assert_eq!(e, "renard: --count-from: cannot be used with --count");
    }
    #[test]
    fn count_from_flag_wins_over_count_variable() {
        let dir = images("layers", 2);
        assert_eq!(config(&["--count-from", dir.to_str().unwrap()], &[("RENARD_COUNT", "9")]).count, 2);
    }
    #[test]
    fn config_file_overrides_variables_and_flags_override_it() {
        let dir = scratch_dir("file");
        let file = dir.join("renard.conf");
        std::fs::write(&file, "# N and the template\nRENARD_COUNT=4\n\nRENARD_LOCATION=/a/{n}\n").unwrap();
        let c = config(&["--config", file.to_str().unwrap()], &[("RENARD_COUNT", "9"), ("RENARD_LOCATION", "/b/{n}")]);
        assert_eq!((c.count, c.location.as_slice()), (4, &b"/a/{n}"[..]));
        assert_eq!(config(&["--config", file.to_str().unwrap(), "--count", "2"], &[]).count, 2);
    }
    #[test]
    fn config_file_count_from_wins_over_count_variable() {
        let dir = images("file-from", 3);
        let file = dir.join("renard.conf");
        std::fs::write(&file, format!("RENARD_COUNT_FROM={}\n", dir.display())).unwrap();
        assert_eq!(config(&[], &[("RENARD_CONFIG", file.to_str().unwrap()), ("RENARD_COUNT", "9")]).count, 3);
    }
    #[test]
    fn bad_value_in_config_file_names_file_and_variable() {
        let dir = scratch_dir("file-bad");
        let file = dir.join("renard.conf");
        std::fs::write(&file, "RENARD_COUNT=0\n").unwrap();
        let e = error(&["--config", file.to_str().unwrap()], &[]);
        assert_eq!(
            e,
            format!("renard: {}: RENARD_COUNT: must be an integer from 1 to 1000000 (got \"0\")", file.display())
        );
    }
    #[test]
    fn unknown_variable_in_config_file_is_refused_with_its_line() {
        let dir = scratch_dir("file-unknown");
        let file = dir.join("renard.conf");
        std::fs::write(&file, "RENARD_COUNT=3\nRENARD_LISTEN=0.0.0.0:80\n").unwrap();
        let e = error(&["--config", file.to_str().unwrap()], &[]);
        assert!(e.starts_with(&format!("renard: {}: line 2: \"RENARD_LISTEN\": not one of", file.display())), "{e}");
    }
    #[test]
    fn unreadable_config_file_is_named() {
        assert!(error(&["--config", "/nonexistent/renard.conf"], &[]).starts_with("renard: --config: cannot read "))
    }
    #[test]
    fn empty_value_in_config_file_is_unset() {
        let dir = scratch_dir("file-empty");
        let file = dir.join("renard.conf");
        std::fs::write(&file, "RENARD_COUNT=\n").unwrap();
        assert_eq!(config(&["--config", file.to_str().unwrap()], &[("RENARD_COUNT", "6")]).count, 6);
    }
}
