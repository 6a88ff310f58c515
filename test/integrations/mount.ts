/** The chat test helpers moved to test/support/chat.ts; this module keeps the old import path working. */
export { captureLogger, mount } from '../support/chat.js';
