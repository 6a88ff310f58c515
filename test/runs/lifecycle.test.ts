import { onBothBackends } from './backends.js';
import { runLifecycleScenarios } from './lifecycle.js';

onBothBackends(runLifecycleScenarios);
