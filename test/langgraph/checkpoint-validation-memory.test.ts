import { randomUUID } from 'node:crypto';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { MemoryGraphCheckpointStore } from '../../src/adapters/memory/graph-checkpoints.js';
import { AgentplaneCheckpointSaver } from '../../src/langgraph/checkpoint-saver.js';
import { exposeVitestGlobals } from './validation-globals.js';

exposeVitestGlobals();

// LangGraph's own suite, unfiltered: every checkpointer test it runs by default.
validate({
  checkpointerName: 'agentplane-memory',
  createCheckpointer: () => new AgentplaneCheckpointSaver({ tenant: `t-${randomUUID()}`, storage: new MemoryGraphCheckpointStore() }),
});
