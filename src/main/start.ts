import { loadConfigOrExit } from '../config.js';
import { runApi } from './api.js';

/**
 * `npm start`: with REDIS_URL an API replica on Redis; without it the embedded default, one
 * process on the in-memory adapters serving http://localhost:8420 with the Swagger console.
 */
await runApi(loadConfigOrExit());
