import { performance } from 'node:perf_hooks';
import type { ApiClient } from '../harness/client.js';

/**
 * What one closed-loop call does: `echo` one run through POST /api/runs/wait; `approval` one
 * approval round trip (start → paused at its approval → answered → completed).
 */
export type Workload = 'echo' | 'approval';

export const WORKLOADS: readonly Workload[] = ['echo', 'approval'];

/** The agents measured, each a native one or a LangGraph graph served by bench/langgraph/langgraph.json. */
export const AGENTS = [
  { id: 'echo', label: 'native echo', workload: 'echo' },
  { id: 'lg-echo', label: 'LangGraph echo', workload: 'echo' },
  { id: 'human-review', label: 'native human-review', workload: 'approval' },
  { id: 'lg-human-review', label: 'LangGraph human-review', workload: 'approval' },
] as const satisfies readonly { id: string; label: string; workload: Workload }[];

export type AgentId = (typeof AGENTS)[number]['id'];

/** Each workload's native agent and the LangGraph graph compared with it. */
export const PAIRS: Record<Workload, { native: AgentId; graph: AgentId; unit: string }> = {
  echo: { native: 'echo', graph: 'lg-echo', unit: 'runs' },
  approval: { native: 'human-review', graph: 'lg-human-review', unit: 'round trips' },
};

export const agentLabel = (agent: AgentId): string => AGENTS.find((a) => a.id === agent)!.label;
export const workloadOf = (agent: AgentId): Workload => AGENTS.find((a) => a.id === agent)!.workload;

/** `wait_ms` of each held request: far above any of these runs (a 202, or a `run` missing, counts as a failure). */
const WAIT_MS = 30_000;

type RunReply = { status?: string; state?: Record<string, unknown>; approval?: { id?: string } };

const failure = (what: string, reply: { status: number; text: string }) => `${what} answered ${reply.status}: ${reply.text.slice(0, 300)}`;

/** One echo run through POST /api/runs/wait: its latency, or why it failed. */
async function echoRun(api: ApiClient, agent: AgentId, i: number): Promise<number | string> {
  const sent = performance.now();
  const reply = await api.post<RunReply>('/api/runs/wait', { agent_id: agent, input: { message: `run ${i}` }, wait_ms: WAIT_MS });
  const ms = performance.now() - sent;
  if (reply.status !== 200 || reply.body?.status !== 'completed' || reply.body.state?.echoed !== true) return failure(`${agent}: POST /api/runs/wait`, reply);
  return ms;
}

/**
 * One approval round trip: POST /api/runs/wait (held until the run pauses: 200 `interrupted`
 * with its pending `approval`), then POST /api/approval/respond `{id, approved: true, wait_ms}`
 * (held until the resumed run stops: 200 with `run` `completed`, `outcome: "published"`).
 * Its latency (first request sent → second answer), or why it failed.
 */
async function approvalRoundTrip(api: ApiClient, agent: AgentId, i: number): Promise<number | string> {
  const sent = performance.now();
  const asked = await api.post<RunReply>('/api/runs/wait', { agent_id: agent, input: { topic: `review ${i}` }, wait_ms: WAIT_MS });
  const approvalId = asked.body?.approval?.id;
  if (asked.status !== 200 || asked.body?.status !== 'interrupted' || !approvalId) return failure(`${agent}: POST /api/runs/wait`, asked);
  const done = await api.post<{ status?: string; run?: RunReply }>('/api/approval/respond', { id: approvalId, approved: true, wait_ms: WAIT_MS });
  const ms = performance.now() - sent;
  if (done.status !== 200 || done.body?.status !== 'approved' || done.body.run?.status !== 'completed' || done.body.run.state?.outcome !== 'published') {
    return failure(`${agent}: POST /api/approval/respond`, done);
  }
  return ms;
}

/** One call of `agent`'s workload (`i` tells the calls apart): its latency in ms, or why it failed. */
export function callOf(agent: AgentId): (api: ApiClient, agent: AgentId, i: number) => Promise<number | string> {
  return workloadOf(agent) === 'echo' ? echoRun : approvalRoundTrip;
}
