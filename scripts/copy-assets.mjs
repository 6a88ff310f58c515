// tsc emits only .js: copy the files read at run time beside the code (the Redis Lua
// scripts) into the same place under dist/, so `node dist/...` finds them.
import { cpSync, existsSync } from 'node:fs';

for (const root of ['src']) {
  if (!existsSync(root)) continue;
  cpSync(root, `dist/${root}`, { recursive: true, filter: (path) => !path.endsWith('.ts') });
}
