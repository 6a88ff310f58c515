import { AppError } from '../domain/errors.js';
import { roleAtLeast, type Principal, type Role } from '../domain/types.js';

/**
 * The RBAC gate: with enforcement on, a principal below `required` gets 403 `forbidden`.
 * Callers pass the route's requirement (method rule raised by the route's `minRole`).
 */
export function authorize(principal: Principal, required: Role, enforce: boolean): void {
  if (!enforce || roleAtLeast(principal.role, required)) return;
  throw new AppError('forbidden', `This operation needs the ${required} role.`);
}
