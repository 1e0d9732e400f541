import { useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { FormError } from '../components/Field';
import { Link } from '../router';
import { useSession } from '../session';

/**
 * {PUBLIC_URL}/console/verify-email/<token>: the mailed link's page. Verifying proves that whoever holds the account
 * also reads its mail, so the person signs in as that account first (and comes back here); then confirms with a
 * button, so that a mail client fetching the page ahead does not use the link up.
 */
export function VerifyEmail({ token }: { token: string }) {
  const session = useSession();
  const [state, setState] = useState<'ready' | 'busy' | 'verified'>('ready');
  const [problem, setProblem] = useState<ApiProblem | null>(null);

  const verify = async () => {
    setState('busy');
    setProblem(null);
    try {
      await ok(api.POST('/v1/auth/verify-email/{token}', { params: { path: { token } } }));
      setState('verified');
    } catch (error) {
      setProblem(error as ApiProblem);
      setState('ready');
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Verify your email</h1>
      {state === 'verified' ? (
        <p className="notice" role="status">
          Your email is verified. <Link to="/flags">On to Flagstore</Link>
        </p>
      ) : session === undefined ? null : session === null ? (
        <p>
          <Link to={`/sign-in?returnTo=${encodeURIComponent(`/console/verify-email/${encodeURIComponent(token)}`)}`}>Sign in</Link> as the account
          this link was mailed for, then verify its email here.
        </p>
      ) : (
        <>
          <p>Signed in as {session.user.email}.</p>
          <FormError message={problem?.explain()} />
          <button type="button" className="primary" disabled={state === 'busy'} onClick={() => void verify()}>
            Verify my email
          </button>
        </>
      )}
    </main>
  );
}
