import type { RunJob } from './types.js';

/** The job id of a run job: one per run and approval, so duplicates collapse in every queue. */
export function runJobId(job: Pick<RunJob, 'kind' | 'run_id' | 'approval_id'>): string {
  return [job.kind, job.run_id, job.approval_id].filter(Boolean).join('.');
}

/** Every job id a run's live job can have: its start, a resume, the resume after its latest approval. */
export function liveJobIds(run: { id: string; approval_id?: string }): string[] {
  const ids = [runJobId({ kind: 'start', run_id: run.id }), runJobId({ kind: 'resume', run_id: run.id })];
  if (run.approval_id) ids.push(runJobId({ kind: 'resume', run_id: run.id, approval_id: run.approval_id }));
  return ids;
}
