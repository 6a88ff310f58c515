/**
 * The LangGraph plug-in's one face: the graphs of a `langgraph.json` as agents, and the engine
 * that runs them and serves their threads. Only the composition root imports it
 * (src/main/graphs.ts, lazily, when graphs are configured), so a process without graphs loads
 * nothing of `@langchain/*`; nothing below src/main/ imports src/langgraph/.
 */
export { createGraphEngine } from './engine.js';
export { loadGraphAgents } from './load.js';
