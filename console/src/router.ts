import { useEffect, useState } from 'preact/hooks';

/** A screen of the console, from the URL's fragment (`#/sessions/s-1`): nothing secret goes there. */
export type Route =
  | { screen: 'inbox'; approvalId?: string }
  | { screen: 'decided' }
  | { screen: 'sessions' }
  | { screen: 'session'; sessionId: string }
  | { screen: 'runs' }
  | { screen: 'schedules' }
  | { screen: 'schedule-new' }
  | { screen: 'run-new' }
  /** A fragment that cannot be read (a malformed `%` escape): the shell says so. */
  | { screen: 'broken-link'; fragment: string };

/** Each part of the fragment's path, decoded; undefined when one is not valid percent-encoding. */
function decodedParts(hash: string): string[] | undefined {
  try {
    return hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  } catch {
    // decodeURIComponent throws URIError on `%E0%A4%A` and the like: a link mangled on its way here.
    return undefined;
  }
}

export function parseRoute(hash: string): Route | undefined {
  const parts = decodedParts(hash);
  if (!parts) return { screen: 'broken-link', fragment: hash };
  switch (parts[0]) {
    case 'inbox':
      return parts[1] ? { screen: 'inbox', approvalId: parts[1] } : { screen: 'inbox' };
    case 'approvals':
      return parts[1] === 'decided' ? { screen: 'decided' } : { screen: 'inbox' };
    case 'sessions':
      return parts[1] ? { screen: 'session', sessionId: parts[1] } : { screen: 'sessions' };
    case 'schedules':
      return parts[1] === 'new' ? { screen: 'schedule-new' } : { screen: 'schedules' };
    case 'runs':
      return parts[1] === 'new' ? { screen: 'run-new' } : { screen: 'runs' };
    default:
      return undefined;
  }
}

export function href(route: Route): string {
  switch (route.screen) {
    case 'inbox':
      return route.approvalId ? `#/inbox/${encodeURIComponent(route.approvalId)}` : '#/inbox';
    case 'decided':
      return '#/approvals/decided';
    case 'sessions':
      return '#/sessions';
    case 'session':
      return `#/sessions/${encodeURIComponent(route.sessionId)}`;
    case 'runs':
      return '#/runs';
    case 'schedules':
      return '#/schedules';
    case 'schedule-new':
      return '#/schedules/new';
    case 'run-new':
      return '#/runs/new';
    case 'broken-link':
      return route.fragment;
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
