## One event loop per thread (SPEC §6, §7): an epoll instance over its own SO_REUSEPORT
## listener and its connections. A connection answers every complete request of a read
## with one write, discards bodies, lingers after a closing response, keeps its deadlines,
## and is evicted at the cap in SPEC §7.5's order. Times are monotonic nanoseconds.
import std/[atomics, posix, epoll, times]
import request, response

const
  OutputBound = 64 * 1024      ## most unsent response octets per connection (SPEC §7.5)
  InputBuffer = 128 * 1024     ## read buffer per thread: more than the largest head
  MinRead = 4096               ## do not read into less room; answer what is held first
  LingerNs = 2_000_000_000'i64 ## lingering close: longest wait ...
  LingerBytes = 64 * 1024      ## ... and most octets discarded (SPEC §7.4)
  DrainFinishNs = 500_000_000'i64  ## after the drain window, for responses under way
  ListenersWaitNs = 200_000_000'i64  ## longest wait at the signal for the other threads'
                                     ## listeners to close
  ListenerToken = high(uint64)
  ShutdownToken = high(uint64) - 1

type
  Phase = enum
    Open      ## reading requests
    Closing   ## a closing response is queued; nothing more is read as requests
    Lingering ## write side shut; discarding input until lingerUntil or LingerBytes
  Next = enum Keep, Drop
  Conn = object
    fd: SocketHandle         ## -1: a free slot
    phase: Phase
    linger, peerDone: bool   ## stage the close (§7.4) / the peer shut its side
    leftover: string         ## a partial head, or input held while output waits
    unsent: string           ## response octets the socket has not taken
    bodyLeft: uint64         ## body octets still to discard (SPEC §6)
    progress: Progress       ## the parse of the head in leftover
    headStarted: int64       ## start of the header deadline; -1: no head is due
    lastProgress: int64      ## octets last received or taken by the socket
    lingerUntil: int64
    discarded: int
  Shared* = object           ## what every thread reads
    count*, maxConnections*: int
    redirects*: Redirects
    headerTimeout*, idleTimeout*, drainTimeout*: int64
    open*: Atomic[int]       ## open connections across the threads (for the cap)
    shutdownFd*: cint        ## an eventfd the SIGTERM/SIGINT handler writes
    listeners*: int          ## listening sockets, one per thread
    closedListeners*: Atomic[int]  ## those closed since the signal
  Worker = object
    shared: ptr Shared
    epfd: cint
    listener: SocketHandle
    input, batch: string     ## this read's octets; the responses of this read
    date: DateLine
    rng: uint64              ## splitmix64 state, seeded from the OS
    now: int64
    conns: seq[Conn]
    free: seq[int]
    live: int
    nextScan, drainEnd: int64
    shuttingDown, drainEnded: bool

var
  SOCK_NONBLOCK {.importc, header: "<sys/socket.h>".}: cint
  EPOLL_CLOEXEC {.importc, header: "<sys/epoll.h>".}: cint

proc getrandom(buf: pointer, len: csize_t, flags: cuint): int {.importc, header: "<sys/random.h>".}

proc monotonic(): int64 =
  var t: Timespec
  discard clock_gettime(CLOCK_MONOTONIC, t)
  int64(t.tv_sec) * 1_000_000_000 + int64(t.tv_nsec)

proc draw(w: var Worker): uint64 =
  ## splitmix64: a 64-bit draw; mod N <= 10^6 has a bias below 2^-44 (SPEC §3)
  w.rng += 0x9e3779b97f4a7c15'u64
  var z = w.rng
  z = (z xor (z shr 30)) * 0xbf58476d1ce4e5b9'u64
  z = (z xor (z shr 27)) * 0x94d049bb133111eb'u64
  z xor (z shr 31)

proc deadline(w: Worker, c: Conn, timeout408: var bool): int64 =
  ## when c expires, and whether it then gets a 408 first (SPEC §7.5)
  timeout408 = false
  let idle = c.lastProgress + w.shared.idleTimeout
  if c.phase == Lingering: return c.lingerUntil
  if c.unsent.len > 0 or c.headStarted < 0: return idle  # no deadline on unread input
  let head = c.headStarted + w.shared.headerTimeout
  if c.leftover.len > 0:
    timeout408 = true
    return head
  min(head, idle)

proc refuse(w: var Worker, c: var Conn, why: Reject) =
  w.batch.respond(Refused, 0, false, why, false, Close, w.shared.redirects, w.date)
  c.phase = Closing
  c.linger = true

proc linger(w: var Worker, c: var Conn): Next =
  ## discard input after the write side is shut, until EOF, LingerBytes or an error
  while true:
    let n = recv(c.fd, w.input[0].addr, InputBuffer, 0)
    if n == 0: return Drop
    if n > 0:
      c.discarded += n
      if c.discarded >= LingerBytes: return Drop
    elif errno == EAGAIN or errno == EWOULDBLOCK: return Keep
    elif errno != EINTR: return Drop

proc writeSome(fd: SocketHandle, s: string): int =
  ## the octets of s the socket takes now, or -1 on an error
  while result < s.len:
    let n = send(fd, s[result].unsafeAddr, s.len - result, MSG_NOSIGNAL)
    if n > 0: result += n
    elif n < 0 and (errno == EAGAIN or errno == EWOULDBLOCK): break
    elif n < 0 and errno == EINTR: continue
    else: return -1

proc flush(w: var Worker, c: var Conn): Next =
  ## write the batch after anything unsent, keep what the socket does not take; a
  ## closing connection whose output is all sent lingers, or closes at once
  if w.batch.len > 0:
    if c.unsent.len == 0:
      let n = writeSome(c.fd, w.batch)
      if n < 0:
        w.batch.setLen 0
        return Drop
      if n > 0: c.lastProgress = w.now
      if n < w.batch.len: c.unsent = w.batch[n .. ^1]
    else: c.unsent.add w.batch
    w.batch.setLen 0
  elif c.unsent.len > 0:
    let n = writeSome(c.fd, c.unsent)
    if n < 0: return Drop
    if n > 0:
      c.lastProgress = w.now
      c.unsent = if n == c.unsent.len: "" else: c.unsent[n .. ^1]
  if c.phase == Closing and c.unsent.len == 0:
    if not c.linger or shutdown(c.fd, SHUT_WR) != 0: return Drop
    c.leftover = ""
    c.phase = Lingering
    c.lingerUntil = w.now + LingerNs
    c.discarded = 0
    return linger(w, c)
  Keep

proc serve(w: var Worker, c: var Conn, n: int, answered, paused: var bool): int =
  ## answer every complete request at the start of w.input[0..<n] into the batch,
  ## discarding bodies; the octets consumed. paused: stopped by the output bound.
  var at = 0
  let maxResponse = w.shared.redirects.maxResponse
  while true:
    if c.bodyLeft > 0:
      let skip = min(c.bodyLeft, uint64(n - at))
      c.bodyLeft -= skip
      at += int(skip)
    if at == n or c.bodyLeft > 0: return at
    if c.unsent.len + w.batch.len + maxResponse > OutputBound:
      paused = true
      return at
    let p = parseMore(w.input.toOpenArray(at, n - 1), c.progress)
    if p.outcome != Partial: c.progress = Progress()
    case p.outcome
    of Complete:
      let r = p.request
      answered = true
      at += r.headLen
      let close = w.shuttingDown or not r.keepAlive or r.chunked or r.expectContinue
      let persistence = if close: Close elif r.http10: KeepAlive else: KeepOpen
      var k = 0
      let answer = case r.route
        of Redirect:
          k = if r.seeded: int(r.seedHash mod uint64(w.shared.count)) + 1
              else: int(w.draw mod uint64(w.shared.count)) + 1
          Found
        of Health: Healthy
        of NotFound: Missing
        of MethodNotAllowed: NotAllowed
      w.batch.respond(answer, k, r.seeded, BadRequest, r.headMethod, persistence,
                      w.shared.redirects, w.date)
      if close:
        # asked to close, no body, nothing after it: the client has nothing to send
        let done = not r.keepAlive and not r.chunked and r.contentLength == 0 and
          not w.shuttingDown and at == n
        c.phase = Closing
        c.linger = not done
        return n
      c.bodyLeft = r.contentLength
    of Partial: return at + p.emptyLines
    of Error:
      w.refuse(c, p.reject)
      answered = true
      return n

proc readRequests(w: var Worker, c: var Conn, peerClosed: bool): Next =
  ## read and answer until the socket is drained, the output bound is reached or the
  ## connection closes (edge-triggered: a short read means drained)
  let maxResponse = w.shared.redirects.maxResponse
  while c.phase == Open and c.unsent.len + maxResponse <= OutputBound:
    let held = c.leftover.len
    if held > 0: copyMem(w.input[0].addr, c.leftover[0].addr, held)
    c.leftover = ""
    let room = InputBuffer - held
    var (received, drained) = (0, false)
    if room >= MinRead and not c.peerDone:
      let n = recv(c.fd, w.input[held].addr, room, 0)
      if n == 0: c.peerDone = true
      elif n > 0:
        received = n
        drained = n < room and not peerClosed
      elif errno == EAGAIN or errno == EWOULDBLOCK: drained = true
      elif errno != EINTR: return Drop
    if received > 0: c.lastProgress = w.now
    var (answered, paused) = (false, false)
    let total = held + received
    if total > 0:
      let consumed = w.serve(c, total, answered, paused)
      if consumed < total and c.phase == Open: c.leftover = w.input[consumed ..< total]
      if answered or c.headStarted < 0:
        c.headStarted = if c.leftover.len > 0: w.now else: -1
    if c.peerDone and not paused and c.phase == Open:
      # every whole request is answered; nothing more can come: no need to linger
      c.phase = Closing
      c.linger = false
      c.leftover = ""
    if w.flush(c) == Drop: return Drop
    if drained and not paused: break
  Keep

proc readable(w: var Worker, c: var Conn, peerClosed: bool): Next =
  case c.phase
  of Open: w.readRequests(c, peerClosed)
  of Lingering: w.linger(c)
  of Closing: Keep

proc writable(w: var Worker, c: var Conn): Next =
  if c.unsent.len == 0: return Keep
  if w.flush(c) == Drop: return Drop
  if c.phase == Open and c.unsent.len + w.shared.redirects.maxResponse <= OutputBound:
    return w.readRequests(c, false)
  Keep

proc evictionRank(c: Conn, class: var int, since: var int64): bool =
  ## SPEC §7.5: 0 lingering, 1 a partial head, 2 nothing received; false when c must
  ## not be chosen (a request not answered, output not written, a body under way)
  case c.phase
  of Lingering:
    (class, since) = (0, c.lingerUntil)
  of Closing: return false
  of Open:
    if c.unsent.len > 0 or c.bodyLeft > 0 or c.peerDone: return false
    if c.leftover.len > 0:
      (class, since) = (1, if c.headStarted >= 0: c.headStarted else: c.lastProgress)
    else:
      (class, since) = (2, c.lastProgress)
  true

proc remove(w: var Worker, i: int) =
  ## close slot i; with no connection left the slots are freed (memory to its baseline)
  discard posix.close(w.conns[i].fd)
  w.conns[i] = Conn(fd: SocketHandle(-1))
  discard w.shared.open.fetchSub(1)
  w.free.add i
  dec w.live
  if w.live == 0:
    w.conns = @[]
    w.free = @[]

proc noteDeadline(w: var Worker, i: int) =
  var unused: bool
  w.nextScan = min(w.nextScan, w.deadline(w.conns[i], unused))

proc victim(w: Worker): int =
  ## the connection least likely to be a client, or -1
  result = -1
  var (bestClass, bestSince) = (3, high(int64))
  for i, c in w.conns:
    var (class, since) = (0, 0'i64)
    if int(c.fd) < 0 or not c.evictionRank(class, since): continue
    if class < bestClass or (class == bestClass and since < bestSince):
      (result, bestClass, bestSince) = (i, class, since)

proc acceptAll(w: var Worker, read = true) =
  ## accept every pending connection and read it at once (or, with read false, only watch
  ## it: epoll reports what it already holds); at the cap make room by eviction, or close
  ## the new one without reading (SPEC §7.5)
  while true:
    let fd = accept4(w.listener, nil, nil, SOCK_NONBLOCK or SOCK_CLOEXEC)
    if int(fd) < 0:
      if errno == EINTR or errno == ECONNABORTED: continue
      return
    if w.shared.open.fetchAdd(1) >= w.shared.maxConnections:
      let v = w.victim
      if v < 0:
        discard w.shared.open.fetchSub(1)
        discard posix.close(fd)
        continue
      w.remove(v)
    var one: cint = 1
    discard setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, one.addr, SockLen(sizeof one))
    let i = if w.free.len > 0: w.free.pop else: (w.conns.add Conn(); w.conns.high)
    var ev = EpollEvent(events: EPOLLIN or EPOLLOUT or EPOLLRDHUP or EPOLLET)
    ev.data.u64 = uint64(i)
    w.conns[i] = Conn(fd: fd, headStarted: w.now, lastProgress: w.now)
    inc w.live
    if epoll_ctl(w.epfd, EPOLL_CTL_ADD, fd, ev.addr) != 0 or (read and w.readable(w.conns[i], false) == Drop):
      w.remove(i)
    else:
      w.noteDeadline(i)

proc expire(w: var Worker) =
  ## apply every passed deadline; the earliest one left becomes nextScan
  w.nextScan = high(int64)
  var i = 0
  while i < w.conns.len:
    if int(w.conns[i].fd) >= 0:
      var timeout408: bool
      var next = Keep
      if w.deadline(w.conns[i], timeout408) <= w.now:
        next = Drop
        if timeout408:
          w.conns[i].leftover = ""
          w.conns[i].progress = Progress()
          w.refuse(w.conns[i], Timeout)
          next = w.flush(w.conns[i])
      if next == Drop:
        w.remove(i)
        if w.conns.len == 0: return
      else: w.noteDeadline(i)
    inc i

proc beginShutdown(w: var Worker) =
  ## SIGTERM/SIGINT: stop listening at once; serve the open connections for the drain
  ## window, every answer with Connection: close (SPEC §7.6). The connections the kernel
  ## already queued on the listener are open ones: accepted (unread, so unanswered yet)
  ## before it is closed, where closing it would reset them. With several threads, no
  ## answer goes out before every listener is closed (ListenersWaitNs at most): a client
  ## told to close must not reconnect to another thread's listener that still listens.
  w.shuttingDown = true
  discard epoll_ctl(w.epfd, EPOLL_CTL_DEL, w.shared.shutdownFd, nil)
  w.drainEnd = w.now + min(w.shared.drainTimeout, w.shared.headerTimeout)
  w.acceptAll(read = false)
  discard posix.close(w.listener)
  w.listener = SocketHandle(-1)
  discard w.shared.closedListeners.fetchAdd(1)
  let until = monotonic() + ListenersWaitNs
  var pause = Timespec(tv_sec: posix.Time(0), tv_nsec: 1_000_000)  # 1 ms between looks
  while w.shared.closedListeners.load < w.shared.listeners and monotonic() < until:
    discard nanosleep(pause, pause)
  w.now = monotonic()

proc endDrain(w: var Worker) =
  ## what has nothing received or an incomplete head is closed unanswered; what the
  ## socket holds is answered; responses under way are finished
  w.drainEnded = true
  var i = 0
  while i < w.conns.len:
    if int(w.conns[i].fd) >= 0:
      var next = Keep
      if w.conns[i].phase == Open and w.conns[i].unsent.len == 0:
        next = w.readRequests(w.conns[i], false)
      if next == Drop or (w.conns[i].phase == Open and w.conns[i].unsent.len == 0):
        w.remove(i)
        if w.conns.len == 0: return
    inc i

proc onEvent(w: var Worker, i: int, events: uint32) =
  if i >= w.conns.len or int(w.conns[i].fd) < 0: return
  let peerClosed = (events and (EPOLLHUP or EPOLLERR)) != 0 or
    ((events and EPOLLIN) != 0 and (events and EPOLLRDHUP) != 0)
  var next = Keep
  if (events and EPOLLOUT) != 0: next = w.writable(w.conns[i])
  if next == Keep and ((events and EPOLLIN) != 0 or peerClosed):
    next = w.readable(w.conns[i], peerClosed)
  if next == Drop: w.remove(i) else: w.noteDeadline(i)

proc run*(shared: ptr Shared, listener: SocketHandle) =
  ## one thread's loop on its listener, until the drain is over
  var w = Worker(shared: shared, listener: listener, nextScan: high(int64),
                 drainEnd: high(int64), now: monotonic())
  w.input = newString(InputBuffer)
  w.date.update(getTime())
  if getrandom(w.rng.addr, 8, 0) != 8: quit("renard: getrandom failed", 1)
  w.epfd = epoll_create1(EPOLL_CLOEXEC)
  var ev = EpollEvent(events: EPOLLIN or EPOLLET)
  ev.data.u64 = ListenerToken
  discard epoll_ctl(w.epfd, EPOLL_CTL_ADD, listener, ev.addr)
  var sd = EpollEvent(events: EPOLLIN)
  sd.data.u64 = ShutdownToken
  discard epoll_ctl(w.epfd, EPOLL_CTL_ADD, shared.shutdownFd, sd.addr)
  var events: array[256, EpollEvent]
  while true:
    var wake = w.nextScan
    if w.shuttingDown:
      wake = min(wake, if w.drainEnded: w.drainEnd + DrainFinishNs else: w.drainEnd)
    var timeoutMs: cint = -1
    if wake != high(int64):  # rounded up and 1 ms more: a timeout never fires early
      let left = wake - monotonic()
      timeoutMs = if left <= 0: 0 else: cint(min(left div 1_000_000 + 1, 86_400_000))
    let n = epoll_wait(w.epfd, events[0].addr, cint(events.len), timeoutMs)
    if n < 0 and errno != EINTR: break
    w.now = monotonic()
    w.date.update(getTime())
    for e in 0 ..< max(n, 0):
      let token = events[e].data.u64
      if token == ListenerToken:
        if int(w.listener) >= 0: w.acceptAll
      elif token == ShutdownToken:
        if not w.shuttingDown: w.beginShutdown
      else: w.onEvent(int(token), events[e].events)
    if w.nextScan <= w.now: w.expire
    if w.shuttingDown:
      if not w.drainEnded and w.now >= w.drainEnd: w.endDrain
      if w.live == 0 or (w.drainEnded and w.now >= w.drainEnd + DrainFinishNs): break
  for i in 0 ..< w.conns.len:
    if int(w.conns[i].fd) >= 0: discard posix.close(w.conns[i].fd)
  if int(w.listener) >= 0: discard posix.close(w.listener)
  discard posix.close(w.epfd)
