-- done() for wrk: one line `arena-json {...}` on stdout with the run's figures.
-- Units: duration_us and latency_us in microseconds. wrk counts as errors.status every
-- answer whose status is >= 400; 1xx/2xx answers are not counted by wrk itself.
-- histogram: wrk's latency histogram folded into HISTOGRAM_PER_DECADE buckets per power of
-- ten, [[bucket, count], ...] in bucket order: bucket b holds 10^((b-1)/20) < v <= 10^(b/20) µs
-- (arena/core/distribution.py reads it); percentiles: wrk's exact ones, µs.
local HISTOGRAM_PER_DECADE = 20
local PERCENTILES = { "50", "75", "90", "99", "99.9", "99.99", "100" }

-- latency(i) is wrk's stats_value_at, which scans up from the smallest latency on every call:
-- it takes value - min + 1 steps, and folding takes their sum over the distinct values. For a
-- long run of a server whose latencies spread widely (a cold JVM's 27 s warm-up lead,
-- pipelined: about 10^11 steps) wrk would spend minutes in done(). Past MAX_FOLD_STEPS (about
-- a second) the fold stops and the histogram is left empty: that sample has no distribution
-- (distribution.py), its percentiles are still wrk's. The steps counted are those taken, not
-- #latency × (max - min + 1): one answer a few hundred ms late made that product cross the
-- bound while the fold took several times fewer steps (13 to 24 times fewer in the tests). A
-- script may set arena_max_fold_steps to lower it (the tests do).
local MAX_FOLD_STEPS = 2e9

local function histogram_json(latency)
   local budget = arena_max_fold_steps or MAX_FOLD_STEPS
   local steps = 0
   local buckets, order = {}, {}
   for i = 1, #latency do
      local value, count = latency(i)
      steps = steps + (value - latency.min + 1)
      if steps > budget then
         return "[]"
      end
      local b = 0
      if value > 1 then
         b = math.ceil(HISTOGRAM_PER_DECADE * math.log10(value) - 1e-9)
      end
      if buckets[b] == nil then
         buckets[b] = 0
         order[#order + 1] = b
      end
      buckets[b] = buckets[b] + count
   end
   table.sort(order)
   local pairs_json = {}
   for i, b in ipairs(order) do
      pairs_json[i] = string.format("[%d,%d]", b, buckets[b])
   end
   return "[" .. table.concat(pairs_json, ",") .. "]"
end

local function percentiles_json(latency)
   local parts = {}
   for i, p in ipairs(PERCENTILES) do
      local value = latency.max -- wrk's percentile(100) reads 0
      if p ~= "100" then
         value = latency:percentile(tonumber(p))
      end
      parts[i] = string.format('"%s":%d', p, value)
   end
   return "{" .. table.concat(parts, ",") .. "}"
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'arena-json {"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d},' ..
      '"histogram":%s,"percentiles":%s}\n',
      summary.requests, summary.duration, summary.bytes,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
      latency.mean, e.connect, e.read, e.write, e.timeout, e.status,
      histogram_json(latency), percentiles_json(latency)))
end
