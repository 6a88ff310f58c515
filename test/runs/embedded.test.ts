import { afterAll, beforeAll } from 'vitest';
import agents from '../fixtures/agents.js';
import { AgentRegistry } from '../../src/runtime/registry.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { runScenarios } from './scenarios.js';

let app: TestApi;

beforeAll(async () => {
  app = await startTestApi({ agents: new AgentRegistry(agents) });
});
afterAll(async () => {
  await app.close();
});

runScenarios('embedded (memory adapters, in-process execution)', () => ({
  url: app.url,
  store: app.backend.store,
  events: app.backend.events,
}));
