import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Api } from './api.js';
import { CallerContext, headersFor, probeRole, storeCredential, storedCredential, type Caller, type Credential } from './auth.js';
import { Notice } from './components/ui.js';
import { messageOf } from './errors.js';
import { Shell } from './shell.js';
import { SignIn } from './screens/sign-in.js';
import type { ConsoleSettings } from './types.js';
import './styles.css';

type Phase =
  | { kind: 'loading' }
  | { kind: 'signed-out'; message?: string }
  | { kind: 'ready'; credential: Credential | undefined; canWrite: boolean; canListPending: boolean }
  | { kind: 'failed'; message: string };

function App({ settings }: { settings: ConsoleSettings }) {
  const [phase, setPhase] = useState<Phase>({ kind: 'loading' });

  const signIn = async (credential: Credential | undefined): Promise<void> => {
    const api = new Api(headersFor(settings, credential));
    try {
      const role = await probeRole(settings, api);
      storeCredential(credential);
      setPhase({ kind: 'ready', credential, ...role });
    } catch (error) {
      storeCredential(undefined);
      setPhase(settings.auth === 'none' ? { kind: 'failed', message: messageOf(error) } : { kind: 'signed-out', message: messageOf(error) });
    }
  };

  useEffect(() => {
    const stored = storedCredential();
    if (settings.auth === 'none' || stored) void signIn(stored);
    else setPhase({ kind: 'signed-out' });
  }, []);

  const caller = useMemo<Caller | undefined>(() => {
    if (phase.kind !== 'ready') return undefined;
    return {
      settings,
      api: new Api(headersFor(settings, phase.credential)),
      canWrite: phase.canWrite,
      canListPending: phase.canListPending,
      signedIn: phase.credential !== undefined,
      signOut: () => {
        storeCredential(undefined);
        setPhase({ kind: 'signed-out' });
      },
    };
  }, [phase, settings]);

  if (phase.kind === 'loading') return <p class="loading">Checking your access…</p>;
  if (phase.kind === 'failed') {
    return (
      <main id="main" class="narrow">
        <h1>agentplane console</h1>
        <Notice kind="error">{phase.message}</Notice>
      </main>
    );
  }
  if (phase.kind === 'signed-out' || !caller) {
    return <SignIn settings={settings} message={phase.kind === 'signed-out' ? phase.message : undefined} onSubmit={signIn} />;
  }
  return (
    <CallerContext.Provider value={caller}>
      <Shell />
    </CallerContext.Provider>
  );
}

async function start(): Promise<void> {
  const root = document.getElementById('app')!;
  try {
    const response = await fetch('./config.json', { cache: 'no-store' });
    if (!response.ok) throw new Error(`config.json answered ${response.status}`);
    render(<App settings={(await response.json()) as ConsoleSettings} />, root);
  } catch (error) {
    render(
      <main id="main" class="narrow">
        <h1>agentplane console</h1>
        <Notice kind="error">The console could not start: {messageOf(error)}</Notice>
      </main>,
      root,
    );
  }
}

void start();
