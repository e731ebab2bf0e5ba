## The entry's own tests (entry.toml `test`): every parsing rule whole and split at every
## octet, spec/vectors/seeds.json through our FNV-1a and decoding, the response octets of
## SPEC §4, the command line's errors. Writes a JUnit report to bin/junit.xml as well.
import std/[json, os, streams, strutils, times, unittest]
import ../src/[config, request, response]

createDir(currentSourcePath.parentDir / "../bin")
let junit = newJUnitOutputFormatter(newFileStream(currentSourcePath.parentDir / "../bin/junit.xml", fmWrite))
addOutputFormatter(defaultConsoleFormatter())
addOutputFormatter(junit)

proc status(p: Parse): int =
  ## what a head gets: the route's status, the refusal's, or 0 for "need more"
  const refused: array[Reject, int] = [400, 408, 414, 431, 501, 505]
  const routed: array[Route, int] = [302, 200, 404, 405]
  case p.outcome
  of Complete: routed[p.request.route]
  of Partial: 0
  of Error: refused[p.reject]

proc statusSplit(s: string, k: int): int =
  ## the status when the first read holds s[0..<k] and the second the rest
  var p: Progress
  let first = parseMore(s.toOpenArray(0, k - 1), p)
  if first.outcome != Partial: return status(first)
  status(parseMore(s.toOpenArray(first.emptyLines, s.high), p))

const Host = "Host: a\r\n"
let rows = [  # (what it proves, head, status), SPEC §2 and §5-§6
  ("GET / redirects", "GET / HTTP/1.1\r\n" & Host & "\r\n", 302),
  ("HEAD / redirects", "HEAD / HTTP/1.1\r\n" & Host & "\r\n", 302),
  ("GET /healthz is ok", "GET /healthz HTTP/1.1\r\n" & Host & "\r\n", 200),
  ("POST / is 405", "POST / HTTP/1.1\r\n" & Host & "\r\n", 405),
  ("lower-case get is an unknown method", "get / HTTP/1.1\r\n" & Host & "\r\n", 405),
  ("paths are octets: /%2F is not /", "GET /%2F HTTP/1.1\r\n" & Host & "\r\n", 404),
  ("/HEALTHZ is not /healthz", "GET /HEALTHZ HTTP/1.1\r\n" & Host & "\r\n", 404),
  ("a query keeps the root", "GET /?r=7 HTTP/1.1\r\n" & Host & "\r\n", 302),
  ("absolute-form is served", "GET HTTP://h:8/?seed=a HTTP/1.1\r\n" & Host & "\r\n", 302),
  ("absolute-form without a path is /", "GET https://h HTTP/1.1\r\n" & Host & "\r\n", 302),
  ("asterisk-form is 400", "OPTIONS * HTTP/1.1\r\n" & Host & "\r\n", 400),
  ("leading empty lines are dropped", "\r\n\n\r\nGET / HTTP/1.1\r\n" & Host & "\r\n", 302),
  ("bare LF ends a line", "GET / HTTP/1.1\n" & Host[0..^3] & "\n\n", 302),
  ("CR not followed by LF is 400", "GET / HTTP/1.1\r\nHost: a\r\n\rX\r\n\r\n", 400),
  ("two spaces are 400", "GET  / HTTP/1.1\r\n" & Host & "\r\n", 400),
  ("a control octet in the target is 400", "GET /\x01 HTTP/1.1\r\n" & Host & "\r\n", 400),
  ("HTTP/2.0 is 505", "GET / HTTP/2.0\r\n" & Host & "\r\n", 505),
  ("HTTP/1 is 400", "GET / HTTP/1\r\n" & Host & "\r\n", 400),
  ("http/1.1 is 400", "GET / http/1.1\r\n" & Host & "\r\n", 400),
  ("HTTP/1.0 without Host is served", "GET / HTTP/1.0\r\n\r\n", 302),
  ("HTTP/1.1 without Host is 400", "GET / HTTP/1.1\r\n\r\n", 400),
  ("two Host lines are 400", "GET / HTTP/1.1\r\n" & Host & Host & "\r\n", 400),
  ("a bad Host is 400", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
  ("an IP-literal Host is served", "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", 302),
  ("space before the colon is 400", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
  ("obs-fold is 400", "GET / HTTP/1.1\r\n" & Host & " x\r\n\r\n", 400),
  ("NUL in a value is 400", "GET / HTTP/1.1\r\n" & Host & "X: \0\r\n\r\n", 400),
  ("obs-text in a value is served", "GET / HTTP/1.1\r\n" & Host & "X: \xff\r\n\r\n", 302),
  ("Content-Length +1 is 400", "GET / HTTP/1.1\r\n" & Host & "Content-Length: +1\r\n\r\n", 400),
  ("Content-Length 5, 5 is 400", "GET / HTTP/1.1\r\n" & Host & "Content-Length: 5, 5\r\n\r\n", 400),
  ("two Content-Length lines are 400",
   "GET / HTTP/1.1\r\n" & Host & "Content-Length: 1\r\nContent-Length: 1\r\n\r\n", 400),
  ("Transfer-Encoding with Content-Length is 400",
   "GET / HTTP/1.1\r\n" & Host & "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
  ("Transfer-Encoding on HTTP/1.0 is 400",
   "GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
  ("gzip, chunked is 501", "GET / HTTP/1.1\r\n" & Host & "Transfer-Encoding: gzip, chunked\r\n\r\n", 501),
  ("chunked, gzip is 400", "GET / HTTP/1.1\r\n" & Host & "Transfer-Encoding: chunked, gzip\r\n\r\n", 400),
  ("chunked is answered", "GET / HTTP/1.1\r\n" & Host & "Transfer-Encoding: Chunked\r\n\r\n", 302),
  ("a request line of 8193 octets is 414", "GET /" & 'a'.repeat(8179) & " HTTP/1.1\r\n\r\n", 414),
  ("a request line of 8192 octets is served",
   "GET /?" & 'a'.repeat(8177) & " HTTP/1.1\r\n" & Host & "\r\n", 302),
  ("a field section of 16385 octets is 431",
   "GET / HTTP/1.1\r\n" & Host & "X: " & 'a'.repeat(16370) & "\r\n\r\n", 431),
  ("101 field lines are 431", "GET / HTTP/1.1\r\n" & Host & "X: y\r\n".repeat(100) & "\r\n", 431)]

suite "parse":
  for (name, head, expected) in rows:
    test name:
      check status(parseRequest(head)) == expected
      for k in 1 ..< head.len:  # resumed after a read that ended at k
        check statusSplit(head, k) == expected

  test "an incomplete head needs more":
    check status(parseRequest("GET / HTTP/1.1\r\nHost: a\r\n")) == 0

  test "Connection: close and HTTP/1.0 keep-alive decide persistence":
    check not parseRequest("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, Close\r\n\r\n").request.keepAlive
    check parseRequest("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").request.keepAlive
    check not parseRequest("GET / HTTP/1.0\r\n\r\n").request.keepAlive

  test "a body's length and Expect: 100-continue are read":
    let r = parseRequest("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n").request
    check r.contentLength == 12 and r.expectContinue

suite "seed":
  test "every vector of spec/vectors/seeds.json gives its k":
    let vectors = parseFile(currentSourcePath.parentDir / "../../../spec/vectors/seeds.json")["vectors"]
    check vectors.len > 10
    for v in vectors:
      let target = "/?" & v["query"].getStr
      var hash: uint64
      let seeded = seedHash(target, 0, target.len, hash)
      checkpoint v["name"].getStr
      check seeded == (v["k"].kind != JNull)
      if seeded: check int(hash mod uint64(v["n"].getInt)) + 1 == v["k"].getInt

suite "responses":
  var date: DateLine
  date.update(fromUnix(1795305600))  # Sun, 22 Nov 2026 00:00:00 GMT
  let r = redirects("https://a.test/{n}/{n}.png")

  test "a seeded redirect, octet for octet":
    var buf = ""
    buf.respond(Found, 7, true, BadRequest, false, KeepOpen, r, date)
    check buf == "HTTP/1.1 302 Found\r\nLocation: https://a.test/7/7.png\r\n" &
      "Cache-Control: public, max-age=86400\r\nDate: Sun, 22 Nov 2026 00:00:00 GMT\r\n" &
      "Content-Length: 0\r\n\r\n"

  test "HEAD /healthz has the length and no body, HTTP/1.0 keep-alive says so":
    var buf = ""
    buf.respond(Healthy, 0, false, BadRequest, true, KeepAlive, r, date)
    check buf == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n" &
      "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\n"

  test "a refusal closes":
    var buf = ""
    buf.respond(Refused, 0, false, FieldsTooLarge, false, Close, r, date)
    check buf == "HTTP/1.1 431 Request Header Fields Too Large\r\n" &
      "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

suite "command line":
  proc noVariables(name: string): string = ""
  proc error(args: seq[string], variables = noVariables): string =
    try:
      discard parse(args, 2, variables)
    except ConfigError as e:
      return e.msg

  test "defaults, and a flag wins over its variable":
    let (command, c) = parse(@["--count=3"], 2, proc (name: string): string =
      if name == "RENARD_COUNT": "7" else: "")
    check command == Serve and c.count == 3 and c.threads == 2 and int(c.port) == 8080
    check c.headerTimeout == 10_000_000_000 and c.drainTimeout == 1_000_000_000

  test "bad values are one line naming the flag or variable":
    check error(@["--count", "0"]) ==
      "renard: --count: must be an integer from 1 to 1000000 (got \"0\")"
    check error(@["--location", "https://x/{n} .png"]).startsWith("renard: --location: ")
    check error(@["--listen", "localhost:80"]).startsWith("renard: --listen: ")
    check error(@["--drain-timeout=-1"]).startsWith("renard: --drain-timeout: ")
    check error(@["--count"]) == "renard: --count: missing value"
    check error(@["--nope"]).startsWith("renard: \"--nope\": unknown flag")
    check error(@["x"]).startsWith("renard: \"x\": unexpected argument")
    check error(@[], proc (name: string): string =
      if name == "RENARD_IDLE_TIMEOUT": "0" else: "").startsWith("renard: RENARD_IDLE_TIMEOUT: ")

junit.close()
