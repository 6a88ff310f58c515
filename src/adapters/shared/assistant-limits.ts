import { AppError } from '../../domain/errors.js';

/** A new assistant past the tenant's cap (nothing is written). */
export const tooManyAssistants = (max: number): AppError =>
  new AppError('payload_too_large', `This tenant holds ${max} assistants, the most it may (SERVICE_ASSISTANTS_MAX); delete one first.`);

/** A creation or change that would take the tenant's assistants past their bytes (nothing is written). */
export const assistantsTooLarge = (max: number): AppError =>
  new AppError(
    'payload_too_large',
    `This tenant's assistants, every version counted, would take more than ${max} bytes of JSON (SERVICE_ASSISTANTS_MAX_BYTES); delete assistants first.`,
  );

/** A new version past the assistant's cap (nothing is written). */
export const tooManyAssistantVersions = (max: number): AppError =>
  new AppError(
    'payload_too_large',
    `The assistant has ${max} versions, the most one may (SERVICE_ASSISTANT_VERSIONS_MAX); create another assistant instead.`,
  );
