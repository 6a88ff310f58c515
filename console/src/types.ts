import type { components } from '../../src/client/index.js';

/** The wire types the console reads: those of the typed client, from the OpenAPI document. */
type Schemas = components['schemas'];

export type JsonObject = Record<string, unknown>;
export type Agent = Schemas['Agent'];
export type Session = Schemas['Session'];
export type Checkpoint = Schemas['Checkpoint'];
export type Run = Schemas['Run'];
export type RunStatus = Run['status'];
export type RunTicket = Schemas['RunTicket'];
export type TenantQueue = Schemas['TenantQueue'];
export type Span = Schemas['Span'];
export type RunEvent = Schemas['RunEvent'];
export type Schedule = Schemas['Schedule'];
export type HistoryRecord = Schemas['ScheduleHistoryRecord'];

/** An approval request as the API answers it, pending or decided. */
export type ApprovalRequest = Schemas['ApprovalRequest'];

/**
 * A pending approval as the inbox shows it. From GET /api/approval/pending it has every
 * field; folded from events (a viewer's inbox) it has no prompt until GET /api/approvals/{id}
 * fills it in.
 */
export type Approval = Omit<ApprovalRequest, 'prompt' | 'status'> & { prompt?: string };

/** What /console/config.json says about the server. */
export interface ConsoleSettings {
  auth: 'none' | 'jwt' | 'apikey';
  api_key_header: string;
  approvals: boolean;
  schedules: boolean;
}
