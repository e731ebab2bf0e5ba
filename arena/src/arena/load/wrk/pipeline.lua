-- request() for wrk: PIPELINE_DEPTH requests in one write; wrk then reads as many answers.
-- With a request mix (arena/load/mix.py defines arena_next_path before this file), each of the
-- PIPELINE_DEPTH requests takes the mix's next request-target; without one, all are the URL's path.
local PIPELINE_DEPTH = 16

init = function(args)
   local batch = {}
   for i = 1, PIPELINE_DEPTH do
      batch[i] = wrk.format(nil, wrk.path) -- the URL's path: / for an entry, --path for --cmd
   end
   pipelined = table.concat(batch)
end

request = function()
   if arena_next_path == nil then
      return pipelined
   end
   local batch = {}
   for i = 1, PIPELINE_DEPTH do
      batch[i] = wrk.format(nil, arena_next_path())
   end
   return table.concat(batch)
end
