"""Interleaved A B A B A B wrk runs (wrk -t1 -c50 on CPU 1): req/s and server CPU us/request.

Usage: wrk_interleaved.py '{"renard": ["http://127.0.0.1:PORT/", [PID]], "nginx": [URL, [MASTER, WORKER]]}' keepalive|pipeline16 [REPS] [DURATION]
Server CPU = utime + stime from /proc/PID/stat summed over the PIDs, over the run, / requests.
"""
import subprocess, sys, re, os, time, resource, json
servers = json.loads(sys.argv[1])     # {"name": [url, pid], ...}
mode = sys.argv[2]                     # keepalive | pipeline16
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
dur = sys.argv[4] if len(sys.argv) > 4 else "10s"
tick = os.sysconf('SC_CLK_TCK')

def cpu(pids):
    total = 0
    for pid in pids:
        f = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
        total += int(f[11]) + int(f[12])
    return total / tick

results = {n: [] for n in servers}
for rep in range(reps):
    for name, (url, pids) in servers.items():
        cmd = ['taskset', '-c', '1', 'wrk', '-t1', '-c50', '-d' + dur, url]
        if mode == 'pipeline16':
            cmd[6:6] = ['-s', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pipeline16.lua')]
        c0 = cpu(pids); r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.time()
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
        t1 = time.time(); c1 = cpu(pids); r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        reqs = int(re.search(r'(\d+) requests in', out).group(1))
        rps = float(re.search(r'Requests/sec:\s+([\d.]+)', out).group(1))
        errs = re.search(r'Socket errors:.*|Non-2xx.*', out)
        wall = t1 - t0
        client = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / wall
        server = (c1 - c0) / wall
        results[name].append(dict(rps=rps, us=(c1 - c0) * 1e6 / reqs, client=client, server=server))
        print(f"{mode} rep{rep} {name}: {rps:.0f} req/s, {(c1-c0)*1e6/reqs:.2f} us/req, server cpu {server:.2f}, wrk cpu {client:.2f}", flush=True)
for name, rs in results.items():
    r = sorted(x['rps'] for x in rs); u = sorted(x['us'] for x in rs)
    print(f"SUMMARY {mode} {name}: rps median {r[len(r)//2]:.0f} ({r[0]:.0f}-{r[-1]:.0f}); us/req median {u[len(u)//2]:.2f} ({u[0]:.2f}-{u[-1]:.2f})")
