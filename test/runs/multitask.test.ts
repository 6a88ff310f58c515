import { onBothBackends } from './backends.js';
import { runMultitaskScenarios } from './multitask.js';

onBothBackends(runMultitaskScenarios);
