--[[
  Decides a pending approval exactly once and, in the same step, queues its interrupted run
  again so the caller only has to enqueue the resume job.

  Every key is the tenant's (one Cluster slot); the caller maintains the global gauge counter.

  KEYS[1] approval hash
  KEYS[2] pending approvals sorted set of the tenant
  KEYS[3] run hash
  KEYS[4] session hash
  KEYS[5] active-runs sorted set of the tenant
  KEYS[6] decided approvals sorted set of the tenant (score = decided_at, ms)

  ARGV, named and ordered by SCRIPT_ARGS.decideApproval (script-args.ts):
  ARGV[1] status (approved | rejected)   ARGV[2] comment   ARGV[3] deciding principal
  ARGV[4] decided_at (RFC 3339)   ARGV[5] run id   ARGV[6] now (ms)
  ARGV[7] prefix of the tenant's run indexes
  ARGV[8] '1' when the decider waits for the run's next stop: the run is marked `waited` (stepRun)
  ARGV[9] resume: the JSON answer, or '' for none (no JSON text is empty)

  Returns {1, removed from pending (0|1), approval hash as a flat array}, or (codes of scripts.ts)
    {NOT_FOUND} no such approval
    {DECIDED} already decided (or closed with its run)
]]
--@include constants
--@include runStatus
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {NOT_FOUND} end
if status ~= 'pending' then return {DECIDED} end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'comment', ARGV[2], 'decided_by', ARGV[3],
  'decided_at', ARGV[4])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'resume', ARGV[9]) end
local id = redis.call('HGET', KEYS[1], 'id')
local removed = redis.call('ZREM', KEYS[2], id)
redis.call('ZADD', KEYS[6], ARGV[6], id)
if redis.call('HGET', KEYS[3], 'status') == 'interrupted' then
  set_run_status(KEYS[3], KEYS[4], KEYS[5], ARGV[7], ARGV[5], 'queued', ARGV[4], ARGV[6])
  if ARGV[8] == '1' then redis.call('HSET', KEYS[3], 'waited', '1') end
end
return {1, removed, redis.call('HGETALL', KEYS[1])}
