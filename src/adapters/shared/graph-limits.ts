import { AppError } from '../../domain/errors.js';

/** A memory item that would take the tenant's items past their byte cap (nothing is written). */
export const graphItemsTooLarge = (capBytes: number): AppError =>
  new AppError('payload_too_large', `The item would take this tenant's LangGraph store past its limit of ${capBytes} bytes; delete items first.`);

/** What a stored item takes of the cap: its name and its record, in UTF-8 bytes. */
export const graphItemBytes = (member: string, record: string): number => Buffer.byteLength(member) + Buffer.byteLength(record);

/** The stored form of an item (both adapters): `created|updated|value JSON`, times in ms. */
export const graphItemRecord = (createdAt: number, updatedAt: number, value: string): string => `${createdAt}|${updatedAt}|${value}`;

/** Reads {@link graphItemRecord}. */
export function parseGraphItemRecord(record: string): { createdAt: number; updatedAt: number; value: string } {
  const first = record.indexOf('|');
  const second = record.indexOf('|', first + 1);
  return { createdAt: Number(record.slice(0, first)), updatedAt: Number(record.slice(first + 1, second)), value: record.slice(second + 1) };
}

/** A LangGraph checkpoint whose whole state (record and every channel value it holds) would pass the cap: nothing is written. */
export const graphStateTooLarge = (bytes: number, capBytes: number): AppError =>
  new AppError('payload_too_large', `The checkpoint's state takes ${bytes} bytes, more than the limit of ${capBytes} (SERVICE_MAX_STATE_BYTES).`);

/** A LangGraph checkpoint or write for a thread whose session is gone (deleted, expired, lost): nothing is written, the run stops. */
export const graphThreadGone = (threadId: string): AppError =>
  new AppError('conflict', `The thread "${threadId}" no longer exists: nothing is written for it.`);
