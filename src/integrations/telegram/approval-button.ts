/** Telegram's bound of a button's callback_data, in bytes. */
export const MAX_CALLBACK_DATA_BYTES = 64;

/** An approval id that starts with a run id (a UUID), then the rest: `.<seq>` of a native approval, `.<32 hex digits>` of a LangGraph interrupt. */
const RUN_ID_FIRST = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})(\..+)$/;
/** `apv:<y|n>:<approval id>`, or `apk:<y|n>:<the run id's 16 bytes in base64url><the rest>`. */
const BUTTON = /^apv:([yn]):(.+)$/;
const PACKED_BUTTON = /^apk:([yn]):([A-Za-z0-9_-]{22})(\..+)$/;

/**
 * The callback_data of an approval's Approve (`approved`) or Reject button: `apv:y:<approval id>`
 * when it fits Telegram's 64 bytes. A LangGraph interrupt's approval id (a run id and 32
 * hexadecimal digits, 69 characters) does not: its run id is then packed into 22 base64url
 * characters, `apk:y:<packed run id>.<interrupt id>` (61 bytes). Throws a RangeError for an id
 * neither form holds.
 */
export function approvalButtonData(approved: boolean, approvalId: string): string {
  const choice = approved ? 'y' : 'n';
  const plain = `apv:${choice}:${approvalId}`;
  if (Buffer.byteLength(plain) <= MAX_CALLBACK_DATA_BYTES) return plain;
  const parts = RUN_ID_FIRST.exec(approvalId);
  const packed = parts ? `apk:${choice}:${Buffer.from(parts.slice(1, 6).join(''), 'hex').toString('base64url')}${parts[6]}` : undefined;
  if (packed !== undefined && Buffer.byteLength(packed) <= MAX_CALLBACK_DATA_BYTES) return packed;
  throw new RangeError(`The approval id ${approvalId} does not fit a Telegram button's ${MAX_CALLBACK_DATA_BYTES} bytes of callback data`);
}

/** The approval and the choice a button's callback_data names ({@link approvalButtonData}); undefined for any other data. */
export function parseApprovalButton(data: string | undefined): { approvalId: string; approved: boolean } | undefined {
  const plain = BUTTON.exec(data ?? '');
  if (plain) return { approvalId: plain[2]!, approved: plain[1] === 'y' };
  const packed = PACKED_BUTTON.exec(data ?? '');
  if (!packed) return undefined;
  const hex = Buffer.from(packed[2]!, 'base64url').toString('hex');
  if (hex.length !== 32) return undefined;
  const runId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { approvalId: `${runId}${packed[3]}`, approved: packed[1] === 'y' };
}
