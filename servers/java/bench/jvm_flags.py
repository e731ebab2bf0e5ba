"""JVM flags, measured: start-up, keep-alive throughput, CPU per request and peak RSS.

Usage (from servers/java, after ./build): python3 bench/jvm_flags.py [SECONDS] [NAME...]
       python3 bench/jvm_flags.py startup RUNS [NAME...]   (start-up only: median, min-max)
For each flag set: start `taskset -c 0 java FLAGS -jar target/renard.jar --threads 1` on a
free loopback port, time exec -> first 302 (connect every 0.5 ms), warm the JIT with
`wrk -t1 -c50` for SECONDS, measure for SECONDS more, then read the server's CPU time
(/proc/PID/stat) and VmHWM (/proc/PID/status). `seed` runs peers/java-seed the arena's way
for the ratio. Bounded: 2 x SECONDS of wrk per set, loopback only.
"""
import os, re, socket, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SEED = HERE.parents[1] / "peers" / "java-seed"
CDS = f"-XX:SharedArchiveFile={HERE}/target/renard.jsa"
SERIAL = ["-XX:+UseSerialGC", "-Xmx8m", "-Xss256k"]
C1 = SERIAL + ["-XX:TieredStopAtLevel=1"]
LEAN = C1 + ["-XX:-UsePerfData"]
SETS = {  # each step adds one flag to the one before, then alternatives to one choice
    "default": [],
    "g1-8m": ["-Xmx8m", "-Xss256k"],
    "serial-8m": SERIAL,
    "serial-8m-c1": C1,
    "serial-8m-c1-noperf": LEAN,
    "serial-8m-c1-noperf-cds": LEAN + [CDS],
    "alt-c2-cds": SERIAL + ["-XX:-UsePerfData", CDS],
    "alt-heap-4m": ["-XX:+UseSerialGC", "-Xmx4m", "-Xss256k", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", CDS],
    "alt-heap-32m": ["-XX:+UseSerialGC", "-Xmx32m", "-Xss256k", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", CDS],
    "alt-g1-cds": ["-Xmx8m", "-Xss256k", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", CDS],
    "alt-epsilon": ["-XX:+UnlockExperimentalVMOptions", "-XX:+UseEpsilonGC", "-Xmx64m", "-Xss256k",
                    "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", CDS],
    "alt-xshare-off": LEAN + ["-Xshare:off"],
    "launcher-nocds": LEAN + ["-Xms4m", "-Xmn512k", "-Xmx64m"],
    "launcher-c2": ["-XX:+UseSerialGC", "-Xms4m", "-Xmn512k", "-Xmx64m", "-Xss256k", "-XX:-UsePerfData", CDS],
    "launcher": None,  # ./renard as committed
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def argv(name: str, port: int) -> list[str]:
    flags = SETS.get(name)
    if name == "seed":
        return ["java", "-Xmx8m", "-Xss256k", "-cp", str(SEED / "build"), "RenardSeed", "127.0.0.1", str(port), "21",
                "https://avatar.example.org/Renard-{n}.png"]
    if flags is None:
        return [str(HERE / "renard"), "--listen", f"127.0.0.1:{port}", "--threads", "1"]
    return ["java", *flags, "-jar", str(HERE / "target/renard.jar"), "--listen", f"127.0.0.1:{port}", "--threads", "1"]


def first_answer(port: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                return s.recv(64).startswith(b"HTTP/1.1 302")
        except OSError:
            time.sleep(0.0005)
    return False


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(port: int, seconds: int) -> float:
    out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c50", f"-d{seconds}s", f"http://127.0.0.1:{port}/"],
                         capture_output=True, text=True, timeout=seconds + 30).stdout
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def measure(name: str, seconds: int) -> str:
    port = free_port()
    start = time.monotonic()
    proc = subprocess.Popen(["taskset", "-c", "0", *argv(name, port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not first_answer(port, start + 10):
            return f"{name}: no answer"
        startup_ms = (time.monotonic() - start) * 1000
        wrk(port, seconds)  # JIT warm-up
        cpu0 = cpu_seconds(proc.pid)
        rps = wrk(port, seconds)
        cpu = cpu_seconds(proc.pid) - cpu0
        hwm = int(re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{proc.pid}/status").read_text()).group(1))
        return (f"{name:22} start-up {startup_ms:6.0f} ms  keep-alive {rps:9.0f} req/s  "
                f"CPU {cpu * 1e6 / (rps * seconds):5.1f} us/req  VmHWM {hwm / 1024:5.1f} MiB")
    finally:
        proc.terminate()
        proc.wait(10)


def startup(name: str, runs: int) -> str:
    times = []
    for _ in range(runs):
        port = free_port()
        start = time.monotonic()
        proc = subprocess.Popen(["taskset", "-c", "0", *argv(name, port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if first_answer(port, start + 10):
                times.append((time.monotonic() - start) * 1000)
        finally:
            proc.terminate()
            proc.wait(10)
    times.sort()
    return f"{name:22} exec -> first 302: median {times[len(times) // 2]:5.0f} ms ({times[0]:.0f}-{times[-1]:.0f}) over {len(times)} runs"


def main() -> None:
    if sys.argv[1:2] == ["startup"]:
        for name in sys.argv[3:] or ["seed", "default", "launcher-nocds", "launcher"]:
            print(startup(name, int(sys.argv[2])), flush=True)
        return
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    names = sys.argv[2:] or ["seed", *SETS]
    for name in names:
        print(measure(name, seconds), flush=True)


if __name__ == "__main__":
    main()
