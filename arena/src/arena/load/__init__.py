"""What the load generators send: the request mix, the warm-up until steady, wrk's Lua scripts."""
