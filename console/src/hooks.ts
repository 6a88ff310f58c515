import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useCaller } from './auth.js';
import { messageOf } from './errors.js';
import { openEventStream, type StreamStatus } from './events.js';
import type { RunEvent } from './types.js';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload(): void;
}

/** Loads `load()` when a dependency changes or on `reload()`; an older answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);
  const [version, setVersion] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const call = ++latest.current;
    setLoading(true);
    load().then(
      (value) => {
        if (call !== latest.current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (caught: unknown) => {
        if (call !== latest.current) return;
        setError(messageOf(caught));
        setLoading(false);
      },
    );
    // The caller names the dependencies, as with useEffect.
  }, [...deps, version]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return { data, error, loading, reload };
}

/**
 * The tenant's run events (one session's with `session`) while the component is mounted,
 * resumed with Last-Event-ID across reconnections. `from`: replay retained events after this
 * id first. Changing `session` or `from` opens a new stream.
 */
export function useEventStream(
  onEvent: (id: string, event: RunEvent) => void,
  options: { session?: string; from?: string; enabled?: boolean } = {},
): { status: StreamStatus; error: string | undefined } {
  const { api } = useCaller();
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const [error, setError] = useState<string | undefined>();
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const enabled = options.enabled ?? true;
  useEffect(() => {
    if (!enabled) return undefined;
    let open = true;
    const close = openEventStream(api, {
      ...(options.session ? { session: options.session } : {}),
      ...(options.from ? { lastEventId: options.from } : {}),
      onEvent: (id, event) => open && handler.current(id, event),
      onStatus: (next, failure) => {
        if (!open) return;
        setStatus(next);
        setError(failure);
      },
    });
    return () => {
      open = false;
      close();
    };
  }, [api, options.session, options.from, enabled]);
  return { status, error };
}
