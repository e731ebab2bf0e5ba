-- request() for wrk: PIPELINE_DEPTH requests in one write; wrk then reads as many answers.
local PIPELINE_DEPTH = 16

init = function(args)
   local batch = {}
   for i = 1, PIPELINE_DEPTH do
      batch[i] = wrk.format(nil, wrk.path) -- the URL's path: / for an entry, --path for --cmd
   end
   pipelined = table.concat(batch)
end

request = function()
   return pipelined
end
