import { createAgentplane } from '../src/main/embed.js';
const app = await createAgentplane({ env: { ...process.env, SERVICE_LANGGRAPH_JSON: 'bench/langgraph/langgraph.json', LOG_LEVEL: 'silent' } });
await import('./lg.js');
await app.close();
