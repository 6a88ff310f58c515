import { useState } from 'preact/hooks';
import type { Credential } from '../auth.js';
import { Notice } from '../components/ui.js';
import type { ConsoleSettings } from '../types.js';

interface SignInProps {
  settings: ConsoleSettings;
  message: string | undefined;
  onSubmit(credential: Credential): Promise<void>;
}

/** Asks for the credential the server's mode takes: an API key, or a bearer token (JWT). */
export function SignIn({ settings, message, onSubmit }: SignInProps) {
  const kind: Credential['kind'] = settings.auth === 'apikey' ? 'apikey' : 'bearer';
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const label = kind === 'apikey' ? `API key (sent as ${settings.api_key_header})` : 'Bearer token (JWT)';

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!value.trim()) return;
    setBusy(true);
    await onSubmit({ kind, value: value.trim() });
    setBusy(false);
  };

  return (
    <main id="main" class="narrow">
      <h1>agentplane console</h1>
      <p>Sign in with your credential. It is kept in this browser tab only (session storage) and sent in a header with each request.</p>
      {message ? <Notice kind="error">{message}</Notice> : null}
      <form onSubmit={submit} class="card">
        <div class="field">
          <label for="credential">{label}</label>
          <input
            id="credential"
            type="password"
            autoComplete="off"
            value={value}
            required
            onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
