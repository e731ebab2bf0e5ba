"""A client that pipelines for 3 s and never reads: renard's memory stays bounded (SPEC 7.5), then it drops the connection after --idle-timeout."""
import os, socket, subprocess, time
p = subprocess.Popen([os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bin', 'renard'),'--listen','127.0.0.1:0','--threads','1','--idle-timeout','3'], stderr=subprocess.PIPE)
port = int(p.stderr.readline().decode().rsplit(':',1)[1])
def rss():
    return [l for l in open(f'/proc/{p.pid}/status') if l.startswith(('VmRSS','VmHWM'))]
s = socket.create_connection(('127.0.0.1', port))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.setblocking(False)
req = b'GET / HTTP/1.1\r\nHost: a\r\n\r\n' * 1000
sent = 0; t0 = time.time()
while time.time() - t0 < 3:
    try: sent += s.send(req)
    except BlockingIOError: time.sleep(0.01)
print('sent before blocking (server stopped reading):', sent, 'octets;', ''.join(rss()).replace('\n', ' '))
time.sleep(4)
try:
    s.setblocking(True); s.settimeout(2); total = 0
    while True:
        d = s.recv(1 << 20)
        if not d: print('EOF after draining', total, 'queued octets: the server had closed'); break
        total += len(d)
except Exception as e: print('recv', e)
p.terminate(); print('exit', p.wait(5))
