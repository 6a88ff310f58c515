import { expect, it } from 'vitest';
import { newId } from '../../src/domain/time.js';

it('mints distinct UUIDv7 ids that sort by creation order', () => {
  const ids = Array.from({ length: 5000 }, () => newId());
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect([...ids].sort()).toEqual(ids);
});
