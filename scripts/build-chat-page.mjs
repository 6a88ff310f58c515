// Bundles the chat example (examples/langgraph/chat-page/: useStream of @langchain/langgraph-sdk,
// React served by preact/compat) with esbuild: index.html, app.js, app.css. `npm run build`
// writes them to dist/examples/chat, which the compiled API serves at /examples/chat/ with
// SERVICE_EXAMPLES=true; an API running from source calls buildChatPage() in memory instead.
// Run alone: `node scripts/build-chat-page.mjs` (prints the sizes, raw and gzipped).
import { join } from 'node:path';
import { bundlePage, isMain, ROOT, writePage } from './bundle-page.mjs';

const SOURCE = join(ROOT, 'examples', 'langgraph', 'chat-page');
export const CHAT_PAGE_DIST = join(ROOT, 'dist', 'examples', 'chat');
const REACT = { react: 'preact/compat', 'react-dom': 'preact/compat' };

/** Builds the chat page in memory. Resolves a map of file name (`index.html`, `app.js`, `app.css`) to its bytes. */
export function buildChatPage() {
  return bundlePage({ entry: join(SOURCE, 'main.tsx'), html: join(SOURCE, 'index.html'), tsconfig: join(SOURCE, 'tsconfig.json'), outdir: CHAT_PAGE_DIST, alias: REACT });
}

if (isMain(import.meta.url)) writePage(await buildChatPage(), CHAT_PAGE_DIST, 'chat page');
