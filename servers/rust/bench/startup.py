"""Time from exec to the first 302: spawn, poll-connect every 0.5 ms, GET /, read. Median of 10."""
import os, socket, subprocess, sys, time, statistics
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bin', 'renard')
times = []
for i in range(10):
    port = 21300 + i
    t0 = time.perf_counter()
    p = subprocess.Popen(['taskset', '-c', '0', binary, '--listen', f'127.0.0.1:{port}', '--threads', '1'], stderr=subprocess.DEVNULL)
    while True:
        try:
            s = socket.create_connection(('127.0.0.1', port), timeout=1); break
        except ConnectionRefusedError:
            time.sleep(0.0005)
    s.sendall(b'GET / HTTP/1.1\r\nHost: a\r\n\r\n')
    data = s.recv(4096)
    t1 = time.perf_counter()
    assert data.startswith(b'HTTP/1.1 302'), data
    times.append((t1 - t0) * 1000)
    s.close(); p.terminate(); p.wait()
print('ms:', ' '.join(f'{t:.1f}' for t in times), '| median %.1f' % statistics.median(times))
