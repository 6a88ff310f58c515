-- Removes runs of one session (judged removable by the caller: never an active one) with
-- their run indexes, schedule links and decided approvals (createRun's retention, deleteRun).
-- Approval ids are '<run id>.<seq_num>[.<n>]' (run ids have no dot). Needs runStatus.
local function drop_runs(run_ids, runs_key, approvals_key, links_key, decided_key, run_prefix, approval_prefix, index_stem)
  if #run_ids == 0 then return end
  local dropped = {}
  for _, run_id in ipairs(run_ids) do
    dropped[run_id .. '.'] = true
    local run = redis.call('HMGET', run_prefix .. run_id, 'agent_id', 'status')
    unindex_run(index_stem, run_id, run[1] or '', run[2] or '')
    redis.call('DEL', run_prefix .. run_id)
    redis.call('HDEL', links_key, run_id)
    redis.call('ZREM', runs_key, run_id)
  end
  for _, id in ipairs(redis.call('SMEMBERS', approvals_key)) do
    if dropped[string.match(id, '^([^.]*%.)') or ''] and redis.call('HGET', approval_prefix .. id, 'status') ~= 'pending' then
      redis.call('DEL', approval_prefix .. id)
      redis.call('SREM', approvals_key, id)
      redis.call('ZREM', decided_key, id)
    end
  end
end
