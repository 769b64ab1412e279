-- Load everything one post's decision may need, in one round trip (worker.adapters.redis.gamestate).
--
-- KEYS: 1 post hash, 2 owner set, 3 scene hash, 4 scenes index, 5 absence hash,
--       6 inactive hash, 7 thread actions hash
-- ARGV: 1 scene member (of the scenes index), 2 the author's member (inactive hash),
--       3 game key prefix ("nr:game:{<game>}:"), 4 the author's key part,
--       5 the post's turn part, 6 the scene turn's part without its number,
--       7 n1, n1 extended-name parts, n2, n2 team parts, n3, n3 contest parts,
--       n4, n4 pre-fingerprints,
--       then the combat flag ("0", or "1" and: who zset, names hash, open attacks zset,
--       attack key prefix, attack targets hash, most open links read, the order notice's claim
--       key without the turn part, n5, n5 target sheet parts)
--
-- Returns {1, post hash} for a post processed before; else {0, owned, chars, scene,
-- scene status, absence, inactive, rolled, teams, contests, actors, wpturns, guards, combat}:
-- flat HGETALL arrays, false for a missing string; actors = {part, {ext...}, retries,
-- turnacts} for the author and each owned character; wpturns = {cid, post-turn marker,
-- scene-turn marker, declared-turn marker} per owned character; combat = false, or {the turn's
-- initiative hash, {member, name, inactive} of the scene's participants, the open links' JSON
-- (oldest first), {part, sheet hash} of each target sheet, the turn's order notice claim (its
-- value, or false: guarded, so a claim made before the commit retries the post)} (docs/state.md «Combat»);
-- guards = {kind, key, field, sha1} of each value the decision may depend on ('z': the
-- newest <field> members of a zset; 'm': the first 200 members of a zset, sorted), compared
-- again by commit_post.lua.
local post = redis.call('HGETALL', KEYS[1])
if #post > 0 then return {1, post} end

local prefix = ARGV[3]
local guards = {}
local function digest(kind, value)
  if not value or ((kind == 'h' or kind == 'z' or kind == 'm') and #value == 0) then return 'nil' end
  if kind == 'h' or kind == 'z' or kind == 'm' then return redis.sha1hex('h' .. table.concat(value, '\0')) end
  return redis.sha1hex('s' .. value)
end
local function guard(kind, key, field, value)
  guards[#guards + 1] = {kind, key, field, digest(kind, value)}
end
local function get(key)
  local value = redis.call('GET', key)
  guard('s', key, '', value)
  return value
end

local owned = redis.call('SMEMBERS', KEYS[2])
table.sort(owned)
local chars = {}
for i = 1, math.min(#owned, 20) do
  local key = prefix .. 'char:' .. owned[i]
  local h = redis.call('HGETALL', key)
  guard('h', key, '', h)
  chars[i] = h
end

local scene = redis.call('HGETALL', KEYS[3])
local status = redis.call('HGET', KEYS[4], ARGV[1])
guard('f', KEYS[4], ARGV[1], status)
local absence = redis.call('HGETALL', KEYS[5])
guard('h', KEYS[5], '', absence)
local inactive = redis.call('HGET', KEYS[6], ARGV[2])
guard('f', KEYS[6], ARGV[2], inactive)

local i = 7
local function list()
  local n = tonumber(ARGV[i]); local out = {}
  for j = 1, n do out[j] = ARGV[i + j] end
  i = i + n + 1
  return out
end
local ext_names, team_names, contest_names, fingerprints = list(), list(), list(), list()

local rolled = {}
if #fingerprints > 0 then rolled = redis.call('HMGET', KEYS[7], unpack(fingerprints)) end
-- guarded: an earlier post of the same thread (in the same batch, or another worker's) that
-- rolls the same tag changes the record's «rolled again» flag
for j, fp in ipairs(fingerprints) do guard('f', KEYS[7], fp, rolled[j]) end
local teams, contests = {}, {}
for j, name in ipairs(team_names) do teams[j] = get(prefix .. 'team:' .. name) end
for j, name in ipairs(contest_names) do contests[j] = get(prefix .. 'contest:' .. name) end

local function actor(who)
  local ext = {}
  for j, name in ipairs(ext_names) do ext[j] = get(prefix .. 'ext:' .. who .. ':' .. name) end
  return {who, ext, get(prefix .. 'retries:' .. who), get(prefix .. 'turnacts:' .. who)}
end
-- a key part as worker.adapters.redis.keys.part(value, fold=False) makes it (urllib's quote)
local function quote(value)
  return (string.gsub(value, '[^%w%-_%.~]', function(c) return string.format('%%%02X', string.byte(c)) end))
end
local actors = {actor(ARGV[4])}
local by_part = {[ARGV[4]] = actors[1]}
local wpturns = {}
local scene_turn = ARGV[6] .. (redis.call('HGET', KEYS[3], 'turn') or '0')
for j = 1, #chars do
  local cid = owned[j]
  if cid ~= ARGV[4] then actors[#actors + 1] = actor(cid); by_part[cid] = actors[#actors] end
  -- the turn of the character's declared actions, which may be an earlier post's
  local declared = false
  local turnacts = by_part[cid][4]
  if turnacts then
    local ok, data = pcall(cjson.decode, turnacts)
    if ok and type(data) == 'table' and type(data.turn) == 'string' and data.turn ~= '' then
      declared = get(prefix .. 'wpturn:' .. cid .. ':' .. quote(data.turn))
    end
  end
  wpturns[j] = {cid, get(prefix .. 'wpturn:' .. cid .. ':' .. ARGV[5]),
                get(prefix .. 'wpturn:' .. cid .. ':' .. scene_turn), declared}
end

-- combat (issue 29): the scene turn's initiative order, who is present, the open attack links
-- and the sheets of the targets the tags name and the links name
local combat = false
if ARGV[i] == '1' then
  local who_key, names_key, zkey, attack_prefix, targets_key = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3],
    ARGV[i + 4], ARGV[i + 5]
  local most = tonumber(ARGV[i + 6])
  local notice_key = ARGV[i + 7] .. scene_turn
  i = i + 8
  local target_parts = list()
  local init_key = prefix .. 'init:' .. scene_turn
  local order = redis.call('HGETALL', init_key)
  guard('h', init_key, '', order)
  local present = {}
  if #scene > 0 then
    -- guarded: who is present (a first post of a player joins) and who is inactive decide
    -- whom the turn's order waits for
    local members = redis.call('ZRANGE', who_key, 0, 199)
    local sorted = {}
    for j, m in ipairs(members) do sorted[j] = m end
    table.sort(sorted)
    guard('m', who_key, '', sorted)
    for j, m in ipairs(members) do
      local mark = redis.call('HGET', KEYS[6], m)
      guard('f', KEYS[6], m, mark)
      present[j] = {m, redis.call('HGET', names_key, m) or m, mark and 1 or 0}
    end
  end
  local ids = redis.call('ZRANGE', zkey, -most, -1)
  guards[#guards + 1] = {'z', zkey, tostring(most), digest('z', ids)}
  local links = {}
  local seen = {}
  local wanted = {}
  for _, p in ipairs(target_parts) do
    if not seen[p] then seen[p] = true; wanted[#wanted + 1] = p end
  end
  for _, id in ipairs(ids) do
    local raw = get(attack_prefix .. id)
    if raw then
      links[#links + 1] = raw
      local p = redis.call('HGET', targets_key, id)
      if p and p ~= '' and not seen[p] then seen[p] = true; wanted[#wanted + 1] = p end
    end
  end
  local target_sheets = {}
  for j, p in ipairs(wanted) do
    local key = prefix .. 'char:' .. p
    local h = redis.call('HGETALL', key)
    guard('h', key, '', h)
    target_sheets[j] = {p, h}
  end
  combat = {order, present, links, target_sheets, get(notice_key) or false}
end
return {0, owned, chars, scene, status or false, absence, inactive or false, rolled, teams, contests,
        actors, wpturns, guards, combat}
