import { useEffect, useRef } from 'preact/hooks';
import { useCaller } from './auth.js';
import { href, useRoute, type Route } from './router.js';
import { Inbox } from './screens/inbox.js';
import { ScheduleForm } from './screens/schedule-form.js';
import { Schedules } from './screens/schedules.js';
import { SessionPage } from './screens/session.js';
import { Sessions } from './screens/sessions.js';
import { StartRun } from './screens/start-run.js';

const TITLES: Record<Route['screen'], string> = {
  inbox: 'Approvals',
  sessions: 'Sessions',
  session: 'Session',
  schedules: 'Schedules',
  'schedule-new': 'New schedule',
  'run-new': 'Start a run',
};

/** The navigation and the current screen. Focus moves to the screen's heading when it changes. */
export function Shell() {
  const { settings, canWrite, signedIn, signOut } = useCaller();
  const fallback: Route = settings.approvals ? { screen: 'inbox' } : { screen: 'sessions' };
  const route = useRoute(fallback);
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  useEffect(() => {
    document.title = `${TITLES[route.screen]} · agentplane console`;
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [route.screen, route.screen === 'session' ? route.sessionId : '']);

  const links: { route: Route; label: string; show: boolean }[] = [
    { route: { screen: 'inbox' }, label: 'Approvals', show: settings.approvals },
    { route: { screen: 'sessions' }, label: 'Sessions', show: true },
    { route: { screen: 'schedules' }, label: 'Schedules', show: settings.schedules },
    { route: { screen: 'run-new' }, label: 'Start a run', show: canWrite },
  ];
  const current = (r: Route) =>
    r.screen === route.screen ||
    (r.screen === 'sessions' && route.screen === 'session') ||
    (r.screen === 'schedules' && route.screen === 'schedule-new');

  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          main.current?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">agentplane console</span>
        <nav aria-label="Main">
          <ul>
            {links
              .filter((l) => l.show)
              .map((l) => (
                <li key={l.label}>
                  <a href={href(l.route)} aria-current={current(l.route) ? 'page' : undefined}>
                    {l.label}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <div class="who">
          <span class={canWrite ? 'role' : 'role role-read'}>
            {!canWrite ? 'Read-only (viewer)' : signedIn ? 'Signed in' : 'Authentication off'}
          </span>
          {signedIn ? (
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          ) : null}
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Screen route={route} />
      </main>
    </>
  );
}

function Screen({ route }: { route: Route }) {
  switch (route.screen) {
    case 'inbox':
      return <Inbox approvalId={route.approvalId} />;
    case 'sessions':
      return <Sessions />;
    case 'session':
      return <SessionPage key={route.sessionId} sessionId={route.sessionId} />;
    case 'schedules':
      return <Schedules />;
    case 'schedule-new':
      return <ScheduleForm />;
    case 'run-new':
      return <StartRun />;
  }
}
