import { useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { FormError } from '../components/Field';
import { Link } from '../router';

/**
 * {PUBLIC_URL}/console/verify-email/<token>: the mailed link's page. The person confirms with a button (no session
 * needed: the link proves it), so that a mail client fetching the page ahead does not use the link up.
 */
export function VerifyEmail({ token }: { token: string }) {
  const [state, setState] = useState<'ready' | 'busy' | 'verified'>('ready');
  const [problem, setProblem] = useState<ApiProblem | null>(null);

  const verify = async () => {
    setState('busy');
    setProblem(null);
    try {
      await ok(api.POST('/v1/auth/verify-email/{token}', { params: { path: { token } } }), { signInOn401: false });
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
      ) : (
        <>
          <FormError message={problem?.explain()} />
          <button type="button" className="primary" disabled={state === 'busy'} onClick={() => void verify()}>
            Verify my email
          </button>
        </>
      )}
    </main>
  );
}
