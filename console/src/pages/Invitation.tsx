import { type FormEvent, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import type { components } from '../../.generated/api';
import { Field, FormError } from '../components/Field';
import { Link, navigate } from '../router';
import { useSession, useSignedInCallback } from '../session';

type InvitationPreview = components['schemas']['InvitationPreviewDto'];

/** What each role may do in the organization (decisions.md, "People and sessions"), for the person deciding to join. */
const ROLE_MEANS: Record<InvitationPreview['role'], string> = {
  viewer: 'read its flags and files',
  editor: 'read and change its flags and files',
  admin: 'change its flags and files, and manage its members, invitations and API keys',
};

/**
 * {PUBLIC_URL}/console/invitations/<token>: what the invitation is for (GET /v1/auth/invitations/{token}), then either
 * the invited person signs in (and accepts with their session) or creates the account with a name and password.
 * The service never says whether the email has an account, so the page offers both.
 */
export function Invitation({ token }: { token: string }) {
  const session = useSession();
  const signedIn = useSignedInCallback();
  const [invitation, setInvitation] = useState<InvitationPreview | null>(null);
  const [unreadable, setUnreadable] = useState<ApiProblem | null>(null);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);

  useEffect(() => {
    ok(api.GET('/v1/auth/invitations/{token}', { params: { path: { token } } }), { signInOn401: false }).then(setInvitation, (error) =>
      setUnreadable(error as ApiProblem),
    );
  }, [token]);

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

  // A link that is used, withdrawn or expired offers nothing to fill in: only the way to ask for a new one.
  const spent = unreadable?.status === 404;
  const here = `/console/invitations/${encodeURIComponent(token)}`;
  const signInLink = <Link to={`/sign-in?returnTo=${encodeURIComponent(here)}`}>{invitation ? `sign in as ${invitation.email}` : 'sign in'}</Link>;

  return (
    <main id="main" className="sign-in">
      <h1>Join the studio on Flagstore</h1>
      {unreadable ? (
        <p role="alert">
          {spent ? 'This invitation link is not valid any more (used, withdrawn or expired): ask for a new one.' : unreadable.explain()}
        </p>
      ) : (
        invitation && (
          <>
            <p>
              {invitation.invitedBy ? `${invitation.invitedBy.name} invited` : 'An admin invited'} {invitation.email} to{' '}
              <strong>{invitation.organization.name}</strong> as {invitation.role}. The link works until{' '}
              {new Date(invitation.expiresAt).toLocaleString()}.
            </p>
            <dl className="invitation-facts" aria-label="The invitation">
              <dt>Organization</dt>
              <dd>{invitation.organization.name}</dd>
              <dt>Role</dt>
              <dd>
                {invitation.role}: may {ROLE_MEANS[invitation.role]}
              </dd>
              <dt>Invited by</dt>
              <dd>{invitation.invitedBy?.name ?? 'an admin of the organization'}</dd>
              <dt>For</dt>
              <dd>{invitation.email}</dd>
            </dl>
          </>
        )
      )}
      {!spent && (
        <form onSubmit={accept} noValidate>
          {session ? (
            <p>
              You are signed in as {session.user.email}: accepting adds the organization to yours
              {invitation && invitation.email !== session.user.email
                ? ` (the invitation is for ${invitation.email}: sign out and sign in as them if that is not you)`
                : ''}
              .
            </p>
          ) : (
            <>
              <p>
                Already have an account for this email? Then {signInLink}, and accept here. Otherwise, choose your name and a password (12 characters
                or more) to create it.
              </p>
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
      )}
    </main>
  );
}
