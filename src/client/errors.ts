/**
 * An error answer of the API: its HTTP status and the `{"error": {code, message}}` body every
 * route renders. Thrown by the helpers of the typed client; the raw openapi-fetch
 * methods return it as `error` instead.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    /** HTTP status, 400–599. */
    readonly status: number,
    /** The body's `error.code` (`not_found`, `conflict`…), or `http_<status>` when the body has none. */
    readonly code: string,
    message: string,
    /** `X-Request-Id` of the answer, to find it in the server's logs. */
    readonly requestId?: string,
  ) {
    super(message);
  }

  /** True for answers a later retry may turn into a success: 429 and 5xx. */
  get retryable(): boolean {
    return this.status === 429 || this.status >= 500;
  }

  /** The error for an answer with `status` whose body was parsed (JSON) or read as text. */
  static fromResponse(response: Response, body: unknown): ApiError {
    const detail = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const code = typeof detail?.code === 'string' ? detail.code : `http_${response.status}`;
    const message =
      typeof detail?.message === 'string'
        ? detail.message
        : typeof body === 'string' && body.trim() !== ''
          ? body.trim().slice(0, 500)
          : `${response.status} ${response.statusText}`.trim();
    return new ApiError(response.status, code, message, response.headers.get('x-request-id') ?? undefined);
  }
}

