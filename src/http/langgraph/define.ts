import { z } from 'zod';
import type { ErrorCode } from '../../domain/errors.js';
import { defineRoute, type AnyRoute, type ResponseSpec, type Route, type RouteResult } from '../route.js';
import { errorResponses } from '../schemas.js';

/**
 * What the routes of the LangGraph Server API (the paths `@langchain/langgraph-sdk`'s `Client`
 * calls, at the root of the API port) have in common: their OpenAPI tag, and error bodies that
 * carry `detail` beside the contract's `error`, the field LangGraph clients read.
 */

/** The OpenAPI tag of the LangGraph Server API routes, with its description. */
export const LANGGRAPH_TAG = { name: 'langgraph', description: 'LangGraph Server API (for @langchain/langgraph-sdk)' } as const;

/** The contract's error body plus `detail`, as the LangGraph Server API routes answer errors. */
export const LangGraphErrorSchema = z
  .object({
    error: z.object({
      code: z.string().meta({ description: 'stable, machine-readable (`not_found`, `conflict`, …); one status per code' }),
      message: z.string().meta({ description: 'one human sentence; wording may change' }),
    }),
    detail: z.string().meta({ description: 'the message again: where LangGraph clients read it' }),
  })
  .meta({ id: 'LangGraphError' });

/** {@link errorResponses} with the {@link LangGraphErrorSchema} body and examples. */
export function langgraphErrors(...entries: (number | ErrorCode)[]): Record<number, ResponseSpec> {
  return Object.fromEntries(
    Object.entries(errorResponses(...entries)).map(([status, spec]) => [
      status,
      {
        ...spec,
        // Any Content-Type is read as JSON here (anyContentType): a 415 is a Content-Encoding the server cannot decode.
        ...(status === '415' ? { description: 'Body in a Content-Encoding the server cannot decode' } : {}),
        schema: LangGraphErrorSchema,
        examples: Object.fromEntries(
          Object.entries(spec.examples ?? {}).map(([name, example]) => {
            const value = example.value as { error: { code: string; message: string } };
            return [name, { ...example, value: { ...value, detail: value.error.message } }];
          }),
        ),
      },
    ]),
  );
}

/** A route of the LangGraph Server API: {@link defineRoute} with its tag, `errorDetail` and `anyContentType`. */
export function defineLangGraphRoute<Q = undefined, P = undefined, B = undefined, H = undefined>(
  route: Omit<Route<Q, P, B, H>, 'tag' | 'errorDetail' | 'anyContentType'>,
): AnyRoute {
  return defineRoute<Q, P, B, H>({ ...route, tag: LANGGRAPH_TAG.name, errorDetail: true, anyContentType: true });
}

/** What a LangGraph search asks of its page: where it starts, how long it is, the fields kept. */
export interface SearchPage<F> {
  limit: number;
  offset: number;
  /** Only these fields of each item. */
  select?: readonly F[] | undefined;
}

/**
 * The answer of a LangGraph search over `sorted` (every match, in order): the page, with
 * `X-Pagination-Total` and, while more remain, `X-Pagination-Next` (the next page's offset).
 */
export function searchAnswer<T, F extends keyof T>(sorted: readonly T[], { limit, offset, select }: SearchPage<F>): RouteResult {
  const page = sorted.slice(offset, offset + limit);
  const next: Record<string, string> = offset + page.length < sorted.length ? { 'X-Pagination-Next': String(offset + page.length) } : {};
  return {
    status: 200,
    body: select ? page.map((item) => Object.fromEntries(select.map((field) => [field, item[field]]))) : page,
    headers: { 'X-Pagination-Total': String(sorted.length), ...next },
  };
}
