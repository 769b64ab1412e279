-- Run a one-post script, defined above this text as the function `one(KEYS, ARGV)`, for each
-- post of a batch, in order, in one call (worker.adapters.redis.gamestate: load_posts and
-- commit_posts, issue 30 item 1).  The scripts run one after the other inside one atomic call,
-- so a post's script sees every write of the posts before it.
--
-- ARGV: 1 the number of posts n, then n pairs (that post's number of keys, number of args),
--       then every post's args in order.  KEYS: every post's keys in order.
-- Returns one result per post, as the one-post script returned it; a post whose script
-- answered an error (a programming error: nothing of that post was written) returns
-- {-2, message}.  After a post answering {-1, ...} (commit_post.lua: a conflict) or an error,
-- the posts after it are not run and return {-3}: what is written is a prefix of the posts,
-- in their order.
local n = tonumber(ARGV[1])
local ki, ai = 1, 2 + 2 * n
local out = {}
local stopped = false
for p = 1, n do
  local nk, na = tonumber(ARGV[2 * p]), tonumber(ARGV[2 * p + 1])
  local keys, args = {}, {}
  for j = 1, nk do keys[j] = KEYS[ki + j - 1] end
  for j = 1, na do args[j] = ARGV[ai + j - 1] end
  ki, ai = ki + nk, ai + na
  if stopped then
    out[p] = {-3}
  else
    local r = one(keys, args)
    if type(r) == 'table' and r.err then r = {-2, r.err} end
    stopped = type(r) == 'table' and (r[1] == -1 or r[1] == -2)
    out[p] = r
  end
end
return out
