## Request heads (SPEC §2, §5-§7.1) in one pass that resumes across reads: `Progress`
## keeps the position and what the field lines said, so a head dripped octet by octet
## costs O(n). `parseMore` has three outcomes: complete, need more, error.

const
  MaxRequestLine* = 8192   ## octets, without the line end (rule 3)
  MaxFieldSection* = 16384 ## octets after the request line, the empty line included (rule 6)
  MaxFieldLines* = 100     ## rule 6
  FnvOffset* = 0xcbf29ce484222325'u64
  FnvPrime* = 0x100000001b3'u64

type
  Reject* = enum            ## every one closes the connection (SPEC §7.2)
    BadRequest, Timeout, UriTooLong, FieldsTooLarge, NotImplemented, BadVersion
  Route* = enum Redirect, Health, NotFound, MethodNotAllowed
  Request* = object         ## a complete, valid head
    headLen*: int           ## octets of the head, leading empty lines included
    route*: Route
    seeded*: bool           ## Redirect: the query has a seed whose FNV-1a-64 is seedHash
    seedHash*: uint64
    headMethod*, http10*, keepAlive*, chunked*, expectContinue*: bool
    contentLength*: uint64  ## body octets to discard (SPEC §6)
  Outcome* = enum Complete, Partial, Error
  Parse* = object
    case outcome*: Outcome
    of Complete: request*: Request
    of Partial: emptyLines*: int  ## leading empty-line octets the caller may drop
    of Error: reject*: Reject
  State = enum Start, Method, Target, Version, LineStart, Name, ValueStart, Value
  Field = enum Other, Host, ContentLength, TransferEncoding, Connection, Expect
  Progress* = object        ## where a head stands; default(Progress) is a new head
    pos, methodEnd, targetEnd, fieldsStart, lineStart, valueStart, fieldLines: int
    state: State
    field: Field
    http10: bool
    hosts, lengths, encodings: int
    badHost, lengthValid, close, keepAlive, expectContinue: bool
    length: uint64
    teStart, teEnd: int

const
  TChars = {'a'..'z', 'A'..'Z', '0'..'9', '!', '#', '$', '%', '&', '\'', '*', '+', '-',
            '.', '^', '_', '`', '|', '~'}
  VChars = {'\x21'..'\x7e'}
  ValueChars = VChars + {' ', '\t', '\x80'..'\xff'}
  HostChars = {'a'..'z', 'A'..'Z', '0'..'9', '-', '.', '_', '~', '!', '$', '&', '\'', '(',
               ')', '*', '+', ',', ';', '=', '%'}

proc fnv1a*(s: openArray[char]): uint64 =
  result = FnvOffset
  for c in s: result = (result xor uint64(ord(c))) * FnvPrime

proc lowerEq(s: openArray[char], a, b: int, word: string): bool =
  ## s[a..<b] equals the lower-case word, ignoring ASCII case
  if b - a != word.len: return false
  for i in 0 ..< word.len:
    var c = s[a + i]
    if c in {'A'..'Z'}: c = chr(ord(c) + 32)
    if c != word[i]: return false
  true

proc exactly(s: openArray[char], a, b: int, word: string): bool =
  if b - a != word.len: return false
  for i in 0 ..< word.len:
    if s[a + i] != word[i]: return false
  true

proc trim(s: openArray[char], a, b: var int) =
  while a < b and s[a] in {' ', '\t'}: inc a
  while b > a and s[b - 1] in {' ', '\t'}: dec b

proc validHost(s: openArray[char], a, b: int): bool =
  ## rule 7: empty, or host [":" port]; host a reg-name/IPv4 or an IP-literal in [ ]
  if a == b: return true
  var i = a
  if s[a] == '[':
    i = a + 1
    while i < b and s[i] != ']':
      if s[i] notin (HostChars - {'%'}) + {':'}: return false
      inc i
    if i == b or i == a + 1: return false
    inc i
  else:
    while i < b and s[i] != ':':
      if s[i] notin HostChars: return false
      inc i
  if i == b: return true
  if s[i] != ':': return false
  for j in i + 1 ..< b:
    if s[j] notin {'0'..'9'}: return false
  true

proc hexValue(c: char): int =
  case c
  of '0'..'9': ord(c) - ord('0')
  of 'a'..'f': ord(c) - ord('a') + 10
  of 'A'..'F': ord(c) - ord('A') + 10
  else: -1

proc decodeNext(s: openArray[char], i: var int, b: int): char =
  ## the form-urlencoded octet at s[i] (of s[..<b]): `+` is SP, `%XY` that octet, any
  ## other `%` stays literal
  let c = s[i]
  if c == '+':
    inc i
    return ' '
  if c == '%':
    let hi = if i + 1 < b: hexValue(s[i + 1]) else: -1
    let lo = if i + 2 < b: hexValue(s[i + 2]) else: -1
    if hi >= 0 and lo >= 0:
      i += 3
      return chr(hi * 16 + lo)
  inc i
  c

proc seedHash*(s: openArray[char], a, b: int, hash: var uint64): bool =
  ## SPEC §3.1: the FNV-1a-64 of the first parameter decoded as `seed`, in the
  ## path-and-query s[a..<b]; false when there is none
  var at = a
  while at < b and s[at] != '?': inc at
  if at == b: return false
  inc at
  while true:
    var stop = at
    while stop < b and s[stop] != '&': inc stop
    var nameEnd = at
    while nameEnd < stop and s[nameEnd] != '=': inc nameEnd
    var i = at
    var matched = true
    for w in "seed":
      if i >= nameEnd or decodeNext(s, i, nameEnd) != w:
        matched = false
        break
    if matched and i == nameEnd:
      var h = FnvOffset
      var j = min(nameEnd + 1, stop)
      while j < stop: h = (h xor uint64(ord(decodeNext(s, j, stop)))) * FnvPrime
      hash = h
      return true
    if stop == b: return false
    at = stop + 1

proc note(p: var Progress, s: openArray[char], a, b: int) =
  ## what the field line just read (value s[a..<b], OWS trimmed) says
  case p.field
  of Other: discard
  of Host:
    inc p.hosts
    if not validHost(s, a, b): p.badHost = true
  of ContentLength:
    inc p.lengths
    p.lengthValid = b - a in 1..18
    p.length = 0
    for i in a ..< b:
      if s[i] notin {'0'..'9'}: p.lengthValid = false
      else: p.length = p.length * 10 + uint64(ord(s[i]) - ord('0'))
  of TransferEncoding:
    inc p.encodings
    p.teStart = a
    p.teEnd = b
  of Connection:
    var start = a
    for k in a .. b:
      if k < b and s[k] != ',': continue
      var (x, y) = (start, k)
      trim(s, x, y)
      if lowerEq(s, x, y, "close"): p.close = true
      if lowerEq(s, x, y, "keep-alive"): p.keepAlive = true
      start = k + 1
  of Expect:
    p.expectContinue = lowerEq(s, a, b, "100-continue")

proc fieldOf(s: openArray[char], a, b: int): Field =
  if lowerEq(s, a, b, "host"): Host
  elif lowerEq(s, a, b, "content-length"): ContentLength
  elif lowerEq(s, a, b, "transfer-encoding"): TransferEncoding
  elif lowerEq(s, a, b, "connection"): Connection
  elif lowerEq(s, a, b, "expect"): Expect
  else: Other

proc error(why: Reject): Parse = Parse(outcome: Error, reject: why)

proc complete(s: openArray[char], p: Progress, headLen: int): Parse =
  ## rules 7-9 on a head that passed rules 1-6
  if p.badHost or p.hosts > 1 or (not p.http10 and p.hosts == 0): return error(BadRequest)
  if p.lengths > 1 or (p.lengths == 1 and not p.lengthValid): return error(BadRequest)
  var r = Request(headLen: headLen, http10: p.http10)
  r.contentLength = if p.lengths == 1: p.length else: 0
  if p.encodings > 0:
    if p.lengths > 0 or p.http10 or p.encodings > 1: return error(BadRequest)
    var (start, count, lastA, lastB) = (p.teStart, 0, 0, 0)
    for k in p.teStart .. p.teEnd:
      if k < p.teEnd and s[k] != ',': continue
      var (x, y) = (start, k)
      trim(s, x, y)
      if x == y: return error(BadRequest)
      inc count
      (lastA, lastB) = (x, y)
      start = k + 1
    if not lowerEq(s, lastA, lastB, "chunked"): return error(BadRequest)
    if count > 1: return error(NotImplemented)
    r.chunked = true
  # SPEC §2: origin-form, or absolute-form http(s)://authority[path]
  var (pq, stop) = (p.methodEnd + 1, p.targetEnd)
  if s[pq] != '/':
    var skip = 0
    if stop - pq >= 7 and lowerEq(s, pq, pq + 7, "http://"): skip = 7
    elif stop - pq >= 8 and lowerEq(s, pq, pq + 8, "https://"): skip = 8
    else: return error(BadRequest)
    var k = pq + skip
    while k < stop and s[k] notin {'/', '?', '#'}: inc k
    if k == pq + skip: return error(BadRequest)
    pq = k
  var pathEnd = pq
  while pathEnd < stop and s[pathEnd] != '?': inc pathEnd
  let root = pathEnd == pq or (pathEnd - pq == 1 and s[pq] == '/')
  let health = exactly(s, pq, pathEnd, "/healthz")  # paths and methods: octets, case and all
  let get = exactly(s, 0, p.methodEnd, "GET")
  r.headMethod = exactly(s, 0, p.methodEnd, "HEAD")
  if root and (get or r.headMethod):
    r.route = Redirect
    r.seeded = seedHash(s, pq, stop, r.seedHash)
  elif health and (get or r.headMethod): r.route = Health
  elif root or health: r.route = MethodNotAllowed
  else: r.route = NotFound
  r.keepAlive = not p.close and (not p.http10 or p.keepAlive)
  r.expectContinue = p.expectContinue and not p.http10 and r.contentLength > 0
  Parse(outcome: Complete, request: r)

proc head(s: openArray[char], p: var Progress): Parse =
  ## rules 2-6 octet by octet from p.pos, then rules 7-9 at the empty line; s starts
  ## with the request line
  var pos = p.pos
  let n = s.len
  template partial() =
    p.pos = pos
    return Parse(outcome: Partial)
  template lineEnd(): int =
    ## the octets of the line end at pos (CRLF or LF); a CR at the very end waits
    if s[pos] == '\n': 1
    elif pos + 1 == n: partial()
    elif s[pos + 1] == '\n': 2
    else: return error(BadRequest)
  template withinLine() =
    if pos > MaxRequestLine: return error(UriTooLong)
  template withinFields() =
    if pos - p.fieldsStart > MaxFieldSection: return error(FieldsTooLarge)
  while true:
    case p.state
    of Start, Method:
      while pos < n and s[pos] in TChars: inc pos
      withinLine()
      if pos == n: partial()
      if s[pos] != ' ' or pos == 0: return error(BadRequest)
      p.methodEnd = pos
      inc pos
      p.state = Target
    of Target:
      while pos < n and s[pos] in VChars: inc pos
      withinLine()
      if pos == n: partial()
      if s[pos] != ' ' or pos == p.methodEnd + 1: return error(BadRequest)
      p.targetEnd = pos
      inc pos
      p.state = Version
    of Version:  # rule 4: HTTP/ DIGIT . DIGIT, octet by octet
      let start = p.targetEnd + 1
      while pos < n:
        let i = pos - start
        let fits = if i < 5: s[pos] == "HTTP/"[i]
                   elif i == 5 or i == 7: s[pos] in {'0'..'9'}
                   elif i == 6: s[pos] == '.'
                   else: false
        if not fits: break
        inc pos
      withinLine()
      if pos == n: partial()
      if pos - start != 8 or s[pos] notin {'\r', '\n'}: return error(BadRequest)
      let ending = lineEnd()
      if s[start + 5] != '1' or s[start + 7] notin {'0', '1'}: return error(BadVersion)
      p.http10 = s[start + 7] == '0'
      pos += ending
      p.fieldsStart = pos
      p.state = LineStart
    of LineStart:
      if pos == n: partial()
      if s[pos] in {'\r', '\n'}:
        pos += lineEnd()
        withinFields()
        return complete(s, p, pos)
      if s[pos] notin TChars: return error(BadRequest)  # obs-fold, or not a name
      p.lineStart = pos
      p.state = Name
    of Name:
      while pos < n and s[pos] in TChars: inc pos
      withinFields()
      if pos == n: partial()
      if s[pos] != ':': return error(BadRequest)  # whitespace before the colon too
      p.field = fieldOf(s, p.lineStart, pos)
      inc pos
      p.state = ValueStart
    of ValueStart:
      while pos < n and s[pos] in {' ', '\t'}: inc pos
      withinFields()
      if pos == n: partial()
      p.valueStart = pos
      p.state = Value
    of Value:
      while pos < n and s[pos] in ValueChars: inc pos
      withinFields()
      if pos == n: partial()
      if s[pos] notin {'\r', '\n'}: return error(BadRequest)  # a control octet, DEL
      let ending = lineEnd()
      inc p.fieldLines
      if p.fieldLines > MaxFieldLines: return error(FieldsTooLarge)
      var (a, b) = (p.valueStart, pos)
      trim(s, a, b)
      note(p, s, a, b)
      pos += ending
      withinFields()
      p.state = LineStart

proc parseMore*(s: openArray[char], p: var Progress): Parse =
  ## Go on with the head at the start of s from where p stands. After Partial the caller
  ## drops `emptyLines` octets and calls again with the same octets and more; after
  ## Complete or Error it resets p for the next head.
  if p.state != Start: return head(s, p)
  var at = 0  # rule 1: empty lines before the request line are dropped as they come
  while true:
    if at == s.len: return Parse(outcome: Partial, emptyLines: at)
    if s[at] == '\n': at += 1
    elif s[at] == '\r':
      if at + 1 == s.len: return Parse(outcome: Partial, emptyLines: at)
      if s[at + 1] != '\n': return error(BadRequest)
      at += 2
    else: break
  p.state = Method
  result = head(s.toOpenArray(at, s.len - 1), p)
  case result.outcome
  of Complete: result.request.headLen += at
  of Partial: result.emptyLines = at
  of Error: discard

proc parseRequest*(s: openArray[char]): Parse =
  ## a whole head from scratch (the tests)
  var p: Progress
  parseMore(s, p)
