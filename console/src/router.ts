import { useEffect, useState } from 'preact/hooks';

/** A screen of the console, from the URL's fragment (`#/sessions/s-1`): nothing secret goes there. */
export type Route =
  | { screen: 'inbox'; approvalId?: string }
  | { screen: 'sessions' }
  | { screen: 'session'; sessionId: string }
  | { screen: 'schedules' }
  | { screen: 'schedule-new' }
  | { screen: 'run-new' };

export function parseRoute(hash: string): Route | undefined {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  switch (parts[0]) {
    case 'inbox':
      return parts[1] ? { screen: 'inbox', approvalId: parts[1] } : { screen: 'inbox' };
    case 'sessions':
      return parts[1] ? { screen: 'session', sessionId: parts[1] } : { screen: 'sessions' };
    case 'schedules':
      return parts[1] === 'new' ? { screen: 'schedule-new' } : { screen: 'schedules' };
    case 'runs':
      return { screen: 'run-new' };
    default:
      return undefined;
  }
}

export function href(route: Route): string {
  switch (route.screen) {
    case 'inbox':
      return route.approvalId ? `#/inbox/${encodeURIComponent(route.approvalId)}` : '#/inbox';
    case 'sessions':
      return '#/sessions';
    case 'session':
      return `#/sessions/${encodeURIComponent(route.sessionId)}`;
    case 'schedules':
      return '#/schedules';
    case 'schedule-new':
      return '#/schedules/new';
    case 'run-new':
      return '#/runs/new';
  }
}

export function navigate(route: Route): void {
  location.hash = href(route);
}

/** The current route, following the fragment. */
export function useRoute(fallback: Route): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return parseRoute(hash) ?? fallback;
}
