## The command line and its variables (SPEC §1): a flag wins over its variable, a
## variable over the default; an empty variable is unset. Bad input is one line naming
## the flag (or variable) and the reason.
import std/[strutils, nativesockets, net]

const Version* = "0.1.0"
const Usage* = """usage: renard-nim [--flag VALUE | --flag=VALUE]...

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
  --help, --version
"""

type
  Config* = object
    host*: string          ## numeric IPv4 or IPv6 (without brackets)
    port*: Port
    family*: Domain
    count*, threads*, maxConnections*: int
    location*: string
    headerTimeout*, idleTimeout*, drainTimeout*: int64  ## nanoseconds
  Command* = enum Serve, Help, ShowVersion
  ConfigError* = object of ValueError  ## msg: the one line to print

const Flags = [("--listen", "RENARD_LISTEN", "127.0.0.1:8080"), ("--count", "RENARD_COUNT", "21"),
  ("--location", "RENARD_LOCATION", "https://avatar.example.org/Renard-{n}.png"),
  ("--threads", "RENARD_THREADS", ""), ("--header-timeout", "RENARD_HEADER_TIMEOUT", "10"),
  ("--idle-timeout", "RENARD_IDLE_TIMEOUT", "60"),
  ("--max-connections", "RENARD_MAX_CONNECTIONS", "10000"),
  ("--drain-timeout", "RENARD_DRAIN_TIMEOUT", "1")]

proc quoted(s: string): string =
  ## s in double quotes, unprintable octets escaped: the error stays one line
  result = "\""
  for c in s:
    case c
    of '"', '\\': result.add '\\' & c
    of '\x20'..'\x21', '\x23'..'\x5b', '\x5d'..'\x7e': result.add c
    else: result.add "\\x" & toHex(ord(c), 2).toLowerAscii
  result.add '"'

proc integer(v: string, most: int): int =
  ## a decimal integer from 1 to most, digits only; -1 when it is not one
  if v.len notin 1..9 or not v.allCharsInSet(Digits): return -1
  result = parseInt(v)
  if result notin 1..most: result = -1

proc seconds(v: string): int64 =
  ## DIGITS[.DIGITS], at most 86400 s, in ns (a positive value below 1 ns is 1 ns); -1
  ## when it is not one
  let parts = v.split('.', 1)
  if parts[0].len notin 1..5 or not parts[0].allCharsInSet(Digits): return -1
  var fraction = if parts.len == 2: parts[1] else: ""
  if parts.len == 2 and (fraction.len == 0 or not fraction.allCharsInSet(Digits)): return -1
  let tiny = fraction.len > 0 and fraction.strip(chars = {'0'}).len > 0
  fraction = (fraction & "000000000")[0 ..< 9]
  result = parseBiggestInt(parts[0]) * 1_000_000_000 + parseBiggestInt(fraction)
  if result > 86400'i64 * 1_000_000_000: return -1
  if result == 0 and tiny: result = 1

proc listen(v: string, c: var Config): bool =
  let colon = v.rfind(':')
  if colon < 1 or colon == v.high or v.len - colon - 1 > 5: return false
  let port = v[colon + 1 .. ^1]
  if not port.allCharsInSet(Digits) or parseInt(port) > 65535: return false
  var host = v[0 ..< colon]
  if host[0] == '[':
    if host.len < 3 or host[^1] != ']': return false
    host = host[1 .. ^2]
    if not isIpAddress(host) or parseIpAddress(host).family != IpAddressFamily.IPv6: return false
    c.family = AF_INET6
  else:
    if host.count('.') != 3 or not isIpAddress(host) or
       parseIpAddress(host).family != IpAddressFamily.IPv4: return false
    c.family = AF_INET
  c.host = host
  c.port = Port(parseInt(port))
  true

proc apply(flag: int, v: string, c: var Config): string =
  ## validate one value into c: "", or why it is refused
  case flag
  of 0: (if not listen(v, c): return "must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535")
  of 1, 6:
    let n = integer(v, 1_000_000)
    if n < 0: return "must be an integer from 1 to 1000000"
    if flag == 1: c.count = n else: c.maxConnections = n
  of 2:
    if v.len notin 1..2048: return "must be 1 to 2048 octets long"
    if not v.allCharsInSet({'\x21'..'\x7e'}):
      return "must be visible ASCII only (0x21-0x7E: no space, no control octets)"
    if "{n}" notin v: return "must contain {n}"
    c.location = v
  of 3:
    c.threads = integer(v, 1024)
    if c.threads < 0: return "must be an integer from 1 to 1024"
  of 4, 5:
    let s = seconds(v)
    if s <= 0: return "must be a decimal number of seconds greater than 0 and at most 86400"
    if flag == 4: c.headerTimeout = s else: c.idleTimeout = s
  else:
    c.drainTimeout = seconds(v)
    if c.drainTimeout < 0: return "must be a decimal number of seconds from 0 to 86400"
  ""

proc parse*(args: seq[string], cpus: int, getVar: proc (name: string): string): (Command, Config) =
  ## raises ConfigError with the line to print
  var given: array[Flags.len, string]
  var isGiven: array[Flags.len, bool]
  var i = 0
  while i < args.len:
    let arg = args[i]
    if arg == "--help": return (Help, Config())
    if arg == "--version": return (ShowVersion, Config())
    if not arg.startsWith("--"):
      raise newException(ConfigError,
        "renard: " & quoted(arg) & ": unexpected argument (renard takes only flags; see --help)")
    let eq = arg.find('=')
    let name = if eq < 0: arg else: arg[0 ..< eq]
    var f = 0
    while f < Flags.len and Flags[f][0] != name: inc f
    if f == Flags.len:
      raise newException(ConfigError, "renard: " & quoted(name) & ": unknown flag (see --help)")
    if eq >= 0: given[f] = arg[eq + 1 .. ^1]
    elif i + 1 < args.len:
      inc i
      given[f] = args[i]
    else: raise newException(ConfigError, "renard: " & name & ": missing value")
    isGiven[f] = true
    inc i
  var c = Config(threads: clamp(cpus, 1, 1024))
  for f, (flag, variable, default) in Flags:
    var (name, value) = (flag, given[f])
    if not isGiven[f]:
      value = getVar(variable)
      if value.len > 0: name = variable
      elif default.len > 0: value = default
      else: continue
    let why = apply(f, value, c)
    if why.len > 0: raise newException(ConfigError, "renard: " & name & ": " & why & " (got " & quoted(value) & ")")
  (Serve, c)
