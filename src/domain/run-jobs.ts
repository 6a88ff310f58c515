import type { RunJob } from './types.js';

/** The job id of a run job: one per run and approval, so duplicates collapse in every queue. */
export function runJobId(job: RunJob): string {
  return [job.kind, job.run_id, job.approval_id].filter(Boolean).join('.');
}
