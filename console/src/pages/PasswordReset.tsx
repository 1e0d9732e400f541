import { type FormEvent, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { Field, FormError } from '../components/Field';
import { Link } from '../router';

/** {PUBLIC_URL}/console/password-reset: asks for a reset link by mail ("Forgot password?" on the sign-in page). */
export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      await ok(api.POST('/v1/auth/password-reset', { body: { email } }), { signInOn401: false });
      setSent(true);
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Reset your password</h1>
      {sent ? (
        <p className="notice" role="status">
          If {email} has an account here, a mail with a link to choose a new password is on its way. The link works once, for an hour.
        </p>
      ) : (
        <form onSubmit={submit} noValidate>
          <p>Give the email you sign in with: we mail it a link to choose a new password.</p>
          <Field label="Email" error={problem?.field() === 'email' ? problem.message : undefined}>
            {(props) => <input {...props} type="email" autoComplete="username" value={email} onChange={(event) => setEmail(event.target.value)} />}
          </Field>
          <FormError message={problem && problem.field() !== 'email' ? problem.explain() : null} />
          <button type="submit" className="primary" disabled={busy}>
            Mail me a link
          </button>
        </form>
      )}
      <p>
        <Link to="/sign-in">Back to sign-in</Link>
      </p>
    </main>
  );
}

/** {PUBLIC_URL}/console/password-reset/<token>: the mailed link's page, where a new password is chosen. */
export function PasswordReset({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      await ok(api.POST('/v1/auth/password-reset/{token}', { params: { path: { token } }, body: { newPassword: password } }), { signInOn401: false });
      setDone(true);
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Choose a new password</h1>
      {done ? (
        <p className="notice" role="status">
          Your password is set, and you were signed out everywhere. <Link to="/sign-in">Sign in</Link> with it.
        </p>
      ) : (
        <form onSubmit={submit} noValidate>
          <Field label="New password" error={problem?.field() === 'newPassword' ? problem.message : undefined}>
            {(props) => (
              <input {...props} type="password" autoComplete="new-password" value={password} onChange={(event) => setPassword(event.target.value)} />
            )}
          </Field>
          <FormError message={problem && problem.field() !== 'newPassword' ? problem.explain() : null} />
          <button type="submit" className="primary" disabled={busy}>
            Set the password
          </button>
        </form>
      )}
    </main>
  );
}
