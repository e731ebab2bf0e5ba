## renard-nim: answers GET / with a 302 to a random avatar (spec/SPEC.md). main reads as
## the story: the configuration, one SO_REUSEPORT listener per thread, the shutdown
## signal, one event loop per thread, exit 0 once every loop has drained.
import std/[os, posix, nativesockets]
import config, response, server

var
  shared: Shared
  listeners: array[1024, SocketHandle]  ## one per thread

type CpuSet {.importc: "cpu_set_t", header: "<sched.h>".} = object
proc sched_getaffinity(pid: Pid, size: csize_t, mask: var CpuSet): cint {.importc, header: "<sched.h>".}
proc cpuCount(mask: var CpuSet): cint {.importc: "CPU_COUNT", header: "<sched.h>".}
proc eventfd(initval: cuint, flags: cint): cint {.importc, header: "<sys/eventfd.h>".}

proc onSignal(sig: cint) {.noconv.} =
  ## SIGTERM/SIGINT: every loop learns of it from the eventfd, and stops listening
  ## (server.beginShutdown). Async-signal-safe calls only.
  let saved = errno
  var one = 1'u64
  discard posix.write(shared.shutdownFd, one.addr, 8)
  errno = saved

proc bindListener(c: Config, port: Port): SocketHandle =
  ## a listening socket with SO_REUSEPORT on c's host and port; exits 1 when it cannot
  let fd = createNativeSocket(c.family, SockType.SOCK_STREAM, Protocol.IPPROTO_TCP)
  var one: cint = 1
  discard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, one.addr, SockLen(sizeof one))
  discard setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, one.addr, SockLen(sizeof one))
  let address = getAddrInfo(c.host, port, c.family, SockType.SOCK_STREAM, Protocol.IPPROTO_TCP)
  if bindSocket(fd, address.ai_addr, address.ai_addrlen) != 0 or posix.listen(fd, 4096) != 0:
    let shown = if c.family == Domain.AF_INET6: "[" & c.host & "]" else: c.host
    stderr.writeLine "renard: --listen: cannot bind " & shown & ":" & $c.port & ": " &
      osErrorMsg(osLastError())
    quit 1
  freeAddrInfo(address)
  fd.setBlocking(false)
  fd

proc loop(i: int) {.thread.} =
  {.cast(gcsafe).}: run(shared.addr, listeners[i])

proc main() =
  var cpus: CpuSet
  let available = if sched_getaffinity(Pid(0), csize_t(sizeof(cpus)), cpus) == 0: int(cpuCount(cpus)) else: 1
  var command: Command
  var c: Config
  try:
    (command, c) = parse(commandLineParams(), available, proc (name: string): string = getEnv(name))
  except ConfigError as e:
    stderr.writeLine e.msg
    quit 2
  case command
  of Help:
    stdout.write Usage
    quit 0
  of ShowVersion:
    echo "renard ", Version
    quit 0
  of Serve: discard
  var limit: RLimit  # lift the descriptor limit so that --max-connections can be met
  if getrlimit(RLIMIT_NOFILE, limit) == 0 and limit.rlim_cur < limit.rlim_max:
    limit.rlim_cur = limit.rlim_max
    discard setrlimit(RLIMIT_NOFILE, limit)
  listeners[0] = bindListener(c, c.port)
  let (host, port) = getLocalAddr(listeners[0], c.family)
  for i in 1 ..< c.threads: listeners[i] = bindListener(c, port)
  shared = Shared(count: c.count, maxConnections: c.maxConnections, redirects: redirects(c.location),
                  headerTimeout: c.headerTimeout, idleTimeout: c.idleTimeout,
                  drainTimeout: c.drainTimeout, shutdownFd: eventfd(0, O_CLOEXEC or O_NONBLOCK),
                  listeners: c.threads)
  var action = Sigaction(sa_handler: onSignal, sa_flags: SA_RESTART)
  discard sigemptyset(action.sa_mask)
  discard sigaction(SIGTERM, action)
  discard sigaction(SIGINT, action)
  signal(SIGPIPE, SIG_IGN)
  stderr.writeLine "listening on http://" & (if c.family == Domain.AF_INET6: "[" & host & "]" else: host) &
    ":" & $port
  var threads = newSeq[Thread[int]](c.threads)
  for i in 1 ..< c.threads: createThread(threads[i], loop, i)
  loop(0)
  for i in 1 ..< c.threads: joinThread(threads[i])
  quit 0

main()
