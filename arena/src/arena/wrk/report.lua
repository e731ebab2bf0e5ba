-- done() for wrk: one line `arena-json {...}` on stdout with the run's figures.
-- Units: duration_us and latency_us in microseconds. wrk counts as errors.status every
-- answer whose status is >= 400; 1xx/2xx answers are not counted by wrk itself.
function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'arena-json {"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d}}\n',
      summary.requests, summary.duration, summary.bytes,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
      latency.mean, e.connect, e.read, e.write, e.timeout, e.status))
end
