import { type FormEvent, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { Field, FormError } from '../components/Field';
import { Link, navigate, useLocation } from '../router';
import { useSignedInCallback } from '../session';

/** Only a path of the console: never another site (an open redirect), never the API. */
export function safeReturnTo(raw: string | null): string {
  return raw && raw.startsWith('/console') && !raw.startsWith('//') ? raw : '/console/flags';
}

export function SignIn() {
  const signedIn = useSignedInCallback();
  const { search } = useLocation();
  const returnTo = safeReturnTo(search.get('returnTo'));
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState(false);
  const [passwordReset, setPasswordReset] = useState(false);

  useEffect(() => {
    ok(api.GET('/v1/auth/methods')).then(
      (methods) => {
        setSso(methods.sso);
        setPasswordReset(methods.passwordReset);
      },
      () => setSso(false),
    );
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      const body = await ok(api.POST('/v1/auth/login', { body: { email, password } }), { signInOn401: false });
      signedIn(body);
      navigate(returnTo, { replace: true });
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Flagstore</h1>
      <form onSubmit={submit} noValidate>
        <Field label="Email" error={problem?.field() === 'email' ? problem.message : undefined}>
          {(props) => <input {...props} type="email" autoComplete="username" value={email} onChange={(event) => setEmail(event.target.value)} />}
        </Field>
        <Field label="Password" error={problem?.field() === 'password' ? problem.message : undefined}>
          {(props) => (
            <input
              {...props}
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          )}
        </Field>
        <FormError message={problem && !['email', 'password'].includes(problem.field() ?? '') ? problem.explain() : null} />
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      {passwordReset && (
        <p>
          <Link to="/password-reset">Forgot password?</Link>
        </p>
      )}
      {sso && (
        <p>
          <a className="button" href={`/v1/auth/sso?returnTo=${encodeURIComponent(returnTo)}`}>
            Sign in with SSO
          </a>
        </p>
      )}
    </main>
  );
}
