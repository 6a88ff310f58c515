/**
 * The LangGraph plug-in's light face: what the composition root reads of a `langgraph.json`
 * without loading LangGraph. Nothing it imports, however deep, imports `@langchain/*`
 * (test/unit/architecture.test.ts holds it to that). It is a face of its own because:
 *
 * - the version check must run before LangGraph is imported: an unsupported copy fails while
 *   index.ts is linked (a missing export), before any code of the plug-in runs;
 * - the `http.app` and `ui` of an API process are parts of `langgraph.json` that need no graph,
 *   and load nothing of LangGraph (the UI bundler, @langchain/langgraph-ui, is imported when it builds).
 *
 * The graphs themselves and their engine are the plug-in's one full face, index.ts.
 */
export { checkLangGraphVersions } from './versions.js';
export { loadHttpApp } from './http-app.js';
export { buildUiBundles } from './ui-bundles.js';
