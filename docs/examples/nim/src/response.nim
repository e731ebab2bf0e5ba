## Responses byte by byte (SPEC §4): appended to a batch, one write per read.
import std/[strutils, times]
import request

type
  Persistence* = enum KeepOpen, KeepAlive, Close  ## no Connection field / keep-alive / close
  Answer* = enum Found, Healthy, Missing, NotAllowed, Refused
  Redirects* = object  ## the Location template, split at each {n}
    parts*: seq[string]
  DateLine* = object   ## `Date: ...\r\n`, rendered once per second
    second: int64
    line*: string

proc redirects*(location: string): Redirects =
  var rest = location
  while true:
    let at = rest.find("{n}")
    if at < 0: break
    result.parts.add rest[0 ..< at]
    rest = rest[at + 3 .. ^1]
  result.parts.add rest

proc maxResponse*(r: Redirects): int =
  ## the longest response, octets: the template with 7 digits (k <= 1 000 000) at each
  ## {n}, and 256 for every other line of any response
  result = 256
  for part in r.parts: result += part.len + 7

proc update*(d: var DateLine, now: Time) =
  let second = now.toUnix
  if second == d.second and d.line.len > 0: return
  d.second = second
  d.line = now.utc.format("'Date: 'ddd, dd MMM yyyy HH:mm:ss 'GMT'") & "\r\n"

const StatusLines: array[Reject, string] = [
  "HTTP/1.1 400 Bad Request\r\n", "HTTP/1.1 408 Request Timeout\r\n",
  "HTTP/1.1 414 URI Too Long\r\n", "HTTP/1.1 431 Request Header Fields Too Large\r\n",
  "HTTP/1.1 501 Not Implemented\r\n", "HTTP/1.1 505 HTTP Version Not Supported\r\n"]

proc respond*(buf: var string, answer: Answer, k: int, seeded: bool, reject: Reject,
              headMethod: bool, persistence: Persistence, r: Redirects, date: DateLine) =
  ## append the response to `buf`
  var body = false
  case answer
  of Found:
    buf.add "HTTP/1.1 302 Found\r\nLocation: "
    for i, part in r.parts:
      if i > 0: buf.add $k
      buf.add part
    buf.add(if seeded: "\r\nCache-Control: public, max-age=86400\r\n"
            else: "\r\nCache-Control: no-store\r\n")
  of Healthy:
    buf.add "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n"
    body = true
  of Missing: buf.add "HTTP/1.1 404 Not Found\r\n"
  of NotAllowed: buf.add "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n"
  of Refused: buf.add StatusLines[reject]
  buf.add date.line
  buf.add(if body: "Content-Length: 3\r\n" else: "Content-Length: 0\r\n")
  case persistence
  of KeepAlive: buf.add "Connection: keep-alive\r\n"
  of Close: buf.add "Connection: close\r\n"
  of KeepOpen: discard
  buf.add "\r\n"
  if body and not headMethod: buf.add "ok\n"
