-- renard inside nginx: SPEC §2 (routes), §3 (the redirect: a uniform draw, or FNV-1a-64 of
-- the seed) and §4's status codes, with an empty body. nginx has parsed the request.
local bit = require("bit")

local byte, char, find, sub, gsub = string.byte, string.char, string.find, string.sub, string.gsub
local ngx = ngx

local M = {}
M.__index = M

local FNV_OFFSET = 0xcbf29ce484222325ULL
local FNV_PRIME = 0x100000001b3ULL
local CACHED = 65536 -- locations are kept once built when count is at most this

-- k = (FNV-1a-64(s) mod count) + 1, over the octets of s (SPEC §3).
function M.seeded_k(s, count)
    local h = FNV_OFFSET
    for i = 1, #s do
        h = bit.bxor(h, byte(s, i)) * FNV_PRIME -- uint64_t: the product wraps mod 2^64
    end
    return tonumber(h % count) + 1
end

local function hex_octet(h)
    return char(tonumber(h, 16))
end

-- application/x-www-form-urlencoded: '+' is a space, %XX an octet, a lone '%' stays (§3.1).
function M.decode(s)
    if not find(s, "[%%+]") then
        return s
    end
    return (gsub(gsub(s, "+", " "), "%%(%x%x)", hex_octet))
end

-- The decoded value of the first parameter named `seed` in the raw query, or nil (§3.1).
function M.seed(query)
    if not query then
        return nil
    end
    local start = 1
    while true do
        local stop = find(query, "&", start, true)
        local param = sub(query, start, (stop or 0) - 1)
        local eq = find(param, "=", 1, true)
        local name = eq and sub(param, 1, eq - 1) or param
        if name == "seed" or M.decode(name) == "seed" then
            return M.decode(eq and sub(param, eq + 1) or "")
        end
        if not stop then
            return nil
        end
        start = stop + 1
    end
end

-- count: 1..1000000; template: the Location with {n} at least once (SPEC §1).
function M.new(count, template)
    assert(count >= 1 and count <= 1000000 and count % 1 == 0, "count must be an integer from 1 to 1000000")
    assert(find(template, "{n}", 1, true), "the location must contain {n}")
    local parts, start = {}, 1
    while true do
        local at = find(template, "{n}", start, true)
        parts[#parts + 1] = sub(template, start, (at or 0) - 1)
        if not at then
            break
        end
        start = at + 3
    end
    return setmetatable({ count = count, parts = parts, locations = {} }, M)
end

-- The Location for k: every {n} replaced by the decimal k.
function M:location(k)
    local built = self.locations[k]
    if built then
        return built
    end
    built = table.concat(self.parts, tostring(k))
    if self.count <= CACHED then
        self.locations[k] = built
    end
    return built
end

-- SPEC §3: the generator seeded from the system's entropy in every worker.
function M.seed_random()
    local f = assert(io.open("/dev/urandom", "rb"))
    local b1, b2, b3, b4 = byte(f:read(4), 1, 4)
    f:close()
    math.randomseed(((b1 * 256 + b2) * 256 + b3) * 256 + b4)
end

local function finish(status)
    ngx.status = status
    ngx.header["Content-Type"] = nil -- nginx's default_type would add one
    ngx.header["Content-Length"] = 0
    return ngx.exit(ngx.HTTP_OK) -- the headers as set, no body (ngx.exit(302) would add nginx's page)
end

-- Answers the request: routes on the raw path, as octets (§2).
function M.serve()
    local self = renard
    local uri = ngx.var.request_uri
    local q = find(uri, "?", 1, true)
    local path = q and sub(uri, 1, q - 1) or uri
    local h = ngx.header
    if path ~= "/" and path ~= "/healthz" then
        return finish(404)
    end
    local method = ngx.req.get_method()
    if method ~= "GET" and method ~= "HEAD" then
        h["Allow"] = "GET, HEAD"
        return finish(405)
    end
    if path == "/healthz" then
        h["Content-Type"] = "text/plain"
        h["Cache-Control"] = "no-store"
        h["Content-Length"] = 3
        if method == "GET" then
            ngx.print("ok\n")
        end
        return ngx.exit(ngx.HTTP_OK)
    end
    local seed = q and M.seed(sub(uri, q + 1))
    if seed then
        h["Location"] = self:location(M.seeded_k(seed, self.count))
        h["Cache-Control"] = "public, max-age=86400"
    else
        h["Location"] = self:location(math.random(self.count))
        h["Cache-Control"] = "no-store"
    end
    return finish(302)
end

return M
