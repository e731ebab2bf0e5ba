"""Peak RSS (VmHWM) of renard with 1000 open idle connections, each after one request."""
import os, socket, subprocess, sys, time
cmd = sys.argv[1:] or [os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bin', 'renard'), '--listen', '127.0.0.1:0', '--threads', '1']
p = subprocess.Popen(['taskset', '-c', '0'] + cmd, stderr=subprocess.PIPE)
port = int(p.stderr.readline().decode().rsplit(':', 1)[1])
def status(key):
    for line in open(f'/proc/{p.pid}/status'):
        if line.startswith(key): return line.split(':')[1].strip()
print('at start: VmRSS', status('VmRSS'), 'VmHWM', status('VmHWM'))
socks = []
for i in range(1000):
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b'GET / HTTP/1.1\r\nHost: renard.test\r\n\r\n')
    socks.append(s)
got = 0
for s in socks:
    got += s.recv(4096).startswith(b'HTTP/1.1 302')
time.sleep(0.5)
print('answered', got, 'with 1000 open: VmRSS', status('VmRSS'), 'VmHWM', status('VmHWM'))
for s in socks: s.close()
time.sleep(0.5)
print('after close: VmRSS', status('VmRSS'))
p.terminate(); print('exit', p.wait(5))
