import { useEffect, useRef } from 'preact/hooks';
import { useCaller } from './auth.js';
import { Notice } from './components/ui.js';
import { href, useRoute, type Route } from './router.js';
import { Decided } from './screens/decided.js';
import { Inbox } from './screens/inbox.js';
import { Runs } from './screens/runs.js';
import { ScheduleForm } from './screens/schedule-form.js';
import { Schedules } from './screens/schedules.js';
import { SessionPage } from './screens/session.js';
import { Sessions } from './screens/sessions.js';
import { StartRun } from './screens/start-run.js';

const TITLES: Record<Route['screen'], string> = {
  inbox: 'Approvals',
  decided: 'Decided approvals',
  sessions: 'Sessions',
  session: 'Session',
  runs: 'Runs',
  schedules: 'Schedules',
  'schedule-new': 'New schedule',
  'run-new': 'Start a run',
  'broken-link': 'Broken link',
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
    { route: { screen: 'runs' }, label: 'Runs', show: true },
    { route: { screen: 'schedules' }, label: 'Schedules', show: settings.schedules },
    { route: { screen: 'run-new' }, label: 'Start a run', show: canWrite },
  ];
  const current = (r: Route) =>
    r.screen === route.screen ||
    (r.screen === 'inbox' && route.screen === 'decided') ||
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
    case 'decided':
      return <Decided />;
    case 'sessions':
      return <Sessions />;
    case 'runs':
      return <Runs />;
    case 'session':
      return <SessionPage key={route.sessionId} sessionId={route.sessionId} />;
    case 'schedules':
      return <Schedules />;
    case 'schedule-new':
      return <ScheduleForm />;
    case 'run-new':
      return <StartRun />;
    case 'broken-link':
      return <BrokenLink fragment={route.fragment} />;
  }
}

/** A fragment the router could not read: said in words instead of a blank page. */
function BrokenLink({ fragment }: { fragment: string }) {
  return (
    <section aria-labelledby="broken-title">
      <h1 id="broken-title" tabIndex={-1}>
        Broken link
      </h1>
      <Notice kind="error">
        This link is broken: <code>{fragment}</code> has a malformed % escape, so it names no screen. Its sender may have cut it
        short; choose a screen above.
      </Notice>
    </section>
  );
}
