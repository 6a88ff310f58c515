export { waitFor } from '../../scripts/dev/wait.js';
