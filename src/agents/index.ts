import type { Agent } from '../runtime/agent.js';
import { echo } from './echo.js';
import { humanReview } from './human-review.js';
import { streamWords } from './stream-words.js';

/** The built-in example agents, registered unless AGENTS_MODULE replaces them. */
export const builtInAgents: readonly Agent[] = [echo, humanReview, streamWords];
