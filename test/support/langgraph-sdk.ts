/**
 * The status and JSON body of the HTTP error a `@langchain/langgraph-sdk` call fails with (its
 * HTTPError carries `status` and the body's text); fails when the call succeeds.
 */
export async function sdkFailure(promise: Promise<unknown> | (() => Promise<unknown>)): Promise<{ status: number; body: any }> {
  const error = await (typeof promise === 'function' ? promise() : promise).then(
    () => undefined,
    (e: unknown) => e as { status?: number; text?: string },
  );
  if (!error) throw new Error('expected the call to fail');
  return { status: error.status ?? 0, body: JSON.parse(error.text ?? 'null') };
}
