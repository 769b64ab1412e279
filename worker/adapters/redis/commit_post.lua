-- Commit one post's decision atomically (worker.adapters.redis.gamestate).
--
-- KEYS: 1 the post hash.
-- ARGV: ng, then ng guards (kind, key, field, sha1) as load_post.lua returned them; nf, then
--       nf post-hash field/value pairs; then the writes, each an op name and its arguments
--       (keys are given in full).
--
-- Returns {0} when the post hash exists (committed before: nothing written), {-1, key} when
-- a guarded value changed since the load (nothing written), else {1, claimed notice ids}.
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end

local function digest(kind, value)
  if not value or ((kind == 'h' or kind == 'z' or kind == 'm') and #value == 0) then return 'nil' end
  if kind == 'h' or kind == 'z' or kind == 'm' then return redis.sha1hex('h' .. table.concat(value, '\0')) end
  return redis.sha1hex('s' .. value)
end
local ng = tonumber(ARGV[1])
local i = 2
for _ = 1, ng do
  local kind, key, field, want = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local value
  if kind == 'h' then value = redis.call('HGETALL', key)
  elseif kind == 'f' then value = redis.call('HGET', key, field)
  elseif kind == 'z' then value = redis.call('ZRANGE', key, -tonumber(field), -1)
  elseif kind == 'm' then value = redis.call('ZRANGE', key, 0, 199); table.sort(value)
  else value = redis.call('GET', key) end
  if digest(kind, value) ~= want then return {-1, key} end
  i = i + 4
end

local nf = tonumber(ARGV[i])
local writes = i + 2 * nf + 1

-- check every op before writing anything: a script that fails half-way keeps its writes
local arity = {set = 2, setnx = 2, setpx = 3, hset = 3, hdel = 2, del = 1, sadd = 2, zadd = 3, pexpire = 2,
               zaddnx = 3, zaddgt = 3, zrem = 2, fpadd = 4, claim = 13}
local j = writes
while j <= #ARGV do
  local op = ARGV[j]
  if op == 'hsetm' then j = j + 3 + 2 * tonumber(ARGV[j + 2])
  elseif arity[op] then j = j + 1 + arity[op]
  else return redis.error_reply('commit_post: unknown op ' .. tostring(op)) end
end
if j ~= #ARGV + 1 then return redis.error_reply('commit_post: truncated op list') end

redis.call('HSET', KEYS[1], unpack(ARGV, i + 1, i + 2 * nf))
i = writes
local claimed = {}
while i <= #ARGV do
  local op, a, b, c = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if op == 'set' then redis.call('SET', a, b); i = i + 3
  elseif op == 'setnx' then redis.call('SET', a, b, 'NX'); i = i + 3
  elseif op == 'setpx' then redis.call('SET', a, b, 'PX', c); i = i + 4
  elseif op == 'hset' then redis.call('HSET', a, b, c); i = i + 4
  elseif op == 'hsetm' then
    local n = tonumber(b)
    redis.call('HSET', a, unpack(ARGV, i + 3, i + 2 + 2 * n)); i = i + 3 + 2 * n
  elseif op == 'hdel' then redis.call('HDEL', a, b); i = i + 3
  elseif op == 'del' then redis.call('DEL', a); i = i + 2
  elseif op == 'pexpire' then redis.call('PEXPIRE', a, b); i = i + 3
  elseif op == 'sadd' then redis.call('SADD', a, b); i = i + 3
  elseif op == 'zadd' then redis.call('ZADD', a, b, c); i = i + 4
  elseif op == 'zaddnx' then redis.call('ZADD', a, 'NX', b, c); i = i + 4
  elseif op == 'zaddgt' then redis.call('ZADD', a, 'GT', b, c); i = i + 4
  elseif op == 'zrem' then redis.call('ZREM', a, b); i = i + 3
  elseif op == 'fpadd' then
    -- ARGV: key, pre-fingerprint, fingerprint, most kept: the fingerprints rolled under it
    local cur = redis.call('HGET', a, b)
    if not cur then redis.call('HSET', a, b, c)
    elseif not string.find(' ' .. cur .. ' ', ' ' .. c .. ' ', 1, true) then
      local list = {}
      for fp in string.gmatch(cur .. ' ' .. c, '%S+') do list[#list + 1] = fp end
      local first = math.max(1, #list - tonumber(ARGV[i + 4]) + 1)
      redis.call('HSET', a, b, table.concat(list, ' ', first))
    end
    i = i + 5
  elseif op == 'claim' then
    -- ARGV: claim key, notice id, ttl ms (0: none), notice key, pending zset, notices zset,
    -- most listed, created (epoch s), forum, thread, kind, text, who
    local ok
    if tonumber(ARGV[i + 3]) > 0 then ok = redis.call('SET', a, b, 'NX', 'PX', ARGV[i + 3])
    else ok = redis.call('SET', a, b, 'NX') end
    if ok then
      local created = ARGV[i + 8]
      redis.call('HSET', ARGV[i + 4], 'id', b, 'forum', ARGV[i + 9], 'thread', ARGV[i + 10],
                 'kind', ARGV[i + 11], 'text', ARGV[i + 12], 'who', ARGV[i + 13], 'created', created,
                 'status', 'pending')
      redis.call('ZADD', ARGV[i + 5], created, b)
      redis.call('ZADD', ARGV[i + 6], created, b)
      redis.call('ZREMRANGEBYRANK', ARGV[i + 6], 0, -1 - tonumber(ARGV[i + 7]))
      claimed[#claimed + 1] = b
    end
    i = i + 14
  end
end
return {1, claimed}
