import { type FormEvent, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { Field, FormError } from '../components/Field';
import { navigate } from '../router';
import { useSession, useSignedInCallback } from '../session';

/** {PUBLIC_URL}/console/invitations/<token>: a newcomer chooses a name and password; someone signed in just joins. */
export function Invitation({ token }: { token: string }) {
  const session = useSession();
  const signedIn = useSignedInCallback();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);

  const accept = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    try {
      const body = session ? {} : { name, password };
      await ok(api.POST('/v1/auth/invitations/{token}/accept', { params: { path: { token } }, body }), { signInOn401: false });
      // The session (new, or the same with one more organization) as the service now has it.
      signedIn(await ok(api.GET('/v1/auth/session')));
      navigate('/flags', { replace: true });
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Join the studio on Flagstore</h1>
      <form onSubmit={accept} noValidate>
        {session ? (
          <p>You are signed in as {session.user.email}: accepting adds the organization to yours.</p>
        ) : (
          <>
            <p>Choose your name and a password (12 characters or more) to accept the invitation.</p>
            <Field label="Your name" error={problem?.field() === 'name' ? problem.message : undefined}>
              {(props) => <input {...props} autoComplete="name" value={name} onChange={(event) => setName(event.target.value)} />}
            </Field>
            <Field label="Choose a password" error={problem?.field() === 'password' ? problem.message : undefined}>
              {(props) => (
                <input
                  {...props}
                  type="password"
                  autoComplete="new-password"
                  value={password}
                  onChange={(event) => setPassword(event.target.value)}
                />
              )}
            </Field>
          </>
        )}
        <FormError message={problem && !['name', 'password'].includes(problem.field() ?? '') ? problem.explain() : null} />
        <button type="submit" className="primary">
          Accept the invitation
        </button>
      </form>
    </main>
  );
}
