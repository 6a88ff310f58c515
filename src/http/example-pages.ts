import type { Middleware } from 'koa';
import { builtPage, staticSite } from './static-site.js';

/**
 * Serves the chat example at /examples/chat/ (SERVICE_EXAMPLES=true): a page on the LangGraph
 * SDK's `useStream` that talks to this API's LangGraph routes from the same origin, for the
 * `chat` graph of examples/langgraph. Public static files (index.html, app.js, app.css;
 * dist/examples/chat once built, scripts/build-chat-page.mjs from source); its calls carry no
 * credential, so it is a demo for an API without auth.
 */
export function exampleChatPage(): Middleware {
  return staticSite({
    name: 'the chat example',
    mount: '/examples/chat',
    files: builtPage({ name: 'the chat example', distDir: 'examples/chat', script: 'build-chat-page.mjs', build: 'buildChatPage', setting: 'SERVICE_EXAMPLES' }),
  });
}
