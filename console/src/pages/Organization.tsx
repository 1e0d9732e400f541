import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import type { components } from '../../.generated/api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { Field, FormError } from '../components/Field';
import { Layout } from '../components/Layout';
import { OrganizationSettings } from '../components/OrganizationSettings';
import { ReviewSettings } from '../components/ReviewSettings';
import { useSignedIn } from '../session';

type Member = components['schemas']['MemberDto'];
type Invitation = components['schemas']['InvitationDto'];
type CreatedInvitation = components['schemas']['CreatedInvitationDto'];
type ApiKey = components['schemas']['ApiKeyDto'];
type Role = Member['role'];
type Permission = ApiKey['permissions'][number];

const ROLES: Role[] = ['viewer', 'editor', 'admin'];
const PERMISSIONS: Permission[] = ['FLAGS_READ', 'FLAGS_WRITE', 'FLAGS_WRITE_UNREVIEWED', 'STORAGE_READ', 'STORAGE_WRITE'];

/** The organization's people and keys: every member sees them; admins change roles, invite, remove, and issue keys. */
export function Organization() {
  const session = useSignedIn();
  const [members, setMembers] = useState<Member[]>([]);
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [problem, setProblem] = useState<ApiProblem | null>(null);

  const load = useCallback(async () => {
    try {
      const [people, apiKeys] = await Promise.all([ok(api.GET('/v1/organization/members')), ok(api.GET('/v1/organization/api-keys'))]);
      setMembers(people.members);
      setKeys(apiKeys);
      if (session.isAdmin) setInvitations(await ok(api.GET('/v1/organization/invitations')));
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  }, [session.isAdmin]);
  useEffect(() => {
    void load();
  }, [load]);

  const act = async (call: () => Promise<unknown>) => {
    setProblem(null);
    try {
      await call();
      await load();
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  return (
    <Layout title={session.organization?.name ?? 'Organization'}>
      {problem && (
        <p className="error" role="alert">
          {problem.explain()}
        </p>
      )}
      <Members members={members} act={act} />
      {session.isAdmin && <Invitations invitations={invitations} act={act} />}
      <ApiKeys keys={keys} act={act} />
      <ReviewSettings />
      <OrganizationSettings />
    </Layout>
  );
}

function Members({ members, act }: { members: Member[]; act: (call: () => Promise<unknown>) => Promise<void> }) {
  const session = useSignedIn();
  const [removing, setRemoving] = useState<Member | null>(null);
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <table className="flags">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            {session.isAdmin && <th scope="col">Remove</th>}
          </tr>
        </thead>
        <tbody>
          {members.map((member) => (
            <tr key={member.userId}>
              <td>{member.name}</td>
              <td>{member.email}</td>
              <td>
                {session.isAdmin ? (
                  <select
                    aria-label={`Role of ${member.name}`}
                    value={member.role}
                    onChange={(event) =>
                      void act(() =>
                        ok(
                          api.PATCH('/v1/organization/members/{userId}', {
                            params: { path: { userId: member.userId } },
                            body: { role: event.target.value as Role },
                          }),
                        ),
                      )
                    }
                  >
                    {ROLES.map((role) => (
                      <option key={role} value={role}>
                        {role}
                      </option>
                    ))}
                  </select>
                ) : (
                  member.role
                )}
              </td>
              {session.isAdmin && (
                <td>
                  <button type="button" className="danger" onClick={() => setRemoving(member)}>
                    Remove<span className="visually-hidden"> {member.name}</span>
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <ConfirmDialog
        open={removing !== null}
        title={`Remove ${removing?.name ?? ''}?`}
        confirm={`Remove ${removing?.name ?? ''}`}
        onCancel={() => setRemoving(null)}
        onConfirm={() => {
          const member = removing!;
          setRemoving(null);
          void act(() => ok(api.DELETE('/v1/organization/members/{userId}', { params: { path: { userId: member.userId } } })));
        }}
      >
        <p>They lose access to this organization at once. Their past changes keep their name in the history.</p>
      </ConfirmDialog>
    </section>
  );
}

function Invitations({ invitations, act }: { invitations: Invitation[]; act: (call: () => Promise<unknown>) => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [created, setCreated] = useState<CreatedInvitation | null>(null);
  const invite = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    try {
      setCreated(await ok(api.POST('/v1/organization/invitations', { body: { email, role } })));
      setEmail('');
      await act(async () => undefined);
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };
  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <form onSubmit={invite} noValidate className="inline-form">
        <Field label="Email to invite" error={problem?.field() === 'email' ? problem.message : undefined}>
          {(props) => <input {...props} type="email" value={email} onChange={(event) => setEmail(event.target.value)} />}
        </Field>
        <Field label="Their role">
          {(props) => (
            <select {...props} value={role} onChange={(event) => setRole(event.target.value as Role)}>
              {ROLES.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">Invite</button>
      </form>
      <FormError message={problem && problem.field() !== 'email' ? problem.explain() : null} />
      {created &&
        (created.url ? (
          <div className="notice">
            <p role="status">
              Send {created.email} this link (valid 7 days, once): <code className="link">{created.url}</code>
            </p>
            <CopyButton text={created.url} label="Copy the link" detail={`for ${created.email}`} />
          </div>
        ) : (
          <p className="notice" role="status">
            The invitation is mailed to {created.email} (its link works once, for 7 days).
          </p>
        ))}
      {invitations.length > 0 && (
        <ul>
          {invitations.map((invitation) => (
            <li key={invitation.id}>
              {invitation.email} as {invitation.role}, until {new Date(invitation.expiresAt).toLocaleDateString()}{' '}
              {invitation.delivery && (
                <>
                  <span className={`delivery delivery-${invitation.delivery.state}`}>{deliveryText(invitation.delivery)}</span>{' '}
                  <button
                    type="button"
                    onClick={() =>
                      void act(() =>
                        ok(api.POST('/v1/organization/invitations/{invitationId}/resend', { params: { path: { invitationId: invitation.id } } })),
                      )
                    }
                  >
                    Resend<span className="visually-hidden"> the invitation of {invitation.email}</span>
                  </button>{' '}
                </>
              )}
              <button
                type="button"
                onClick={() =>
                  void act(() => ok(api.DELETE('/v1/organization/invitations/{invitationId}', { params: { path: { invitationId: invitation.id } } })))
                }
              >
                Withdraw<span className="visually-hidden"> the invitation of {invitation.email}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function ApiKeys({ keys, act }: { keys: ApiKey[]; act: (call: () => Promise<unknown>) => Promise<void> }) {
  const session = useSignedIn();
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<Permission[]>(['FLAGS_READ']);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  // The new key's secret, shown once: only while that key is live (revoked here or by anyone else, it is gone).
  const [issued, setIssued] = useState<{ id: string; name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const issuedKey = issued && keys.some((key) => key.id === issued.id && key.revokedAt) ? null : issued;
  const issue = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    try {
      const key = await ok(api.POST('/v1/organization/api-keys', { body: { name, permissions } }));
      setIssued({ id: key.id, name: key.name, key: key.key });
      setName('');
      await act(async () => undefined);
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <table className="flags">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Permissions</th>
            <th scope="col">Created</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>{key.permissions.join(', ')}</td>
              <td>{new Date(key.createdAt).toLocaleDateString()}</td>
              <td>
                {key.revokedAt ? (
                  `revoked ${new Date(key.revokedAt).toLocaleDateString()}`
                ) : session.isAdmin ? (
                  <button type="button" className="danger" onClick={() => setRevoking(key)}>
                    Revoke<span className="visually-hidden"> {key.name}</span>
                  </button>
                ) : (
                  'live'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {session.isAdmin && (
        <form onSubmit={issue} noValidate>
          <Field label="New key name" error={problem?.field() === 'name' ? problem.message : undefined}>
            {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} />}
          </Field>
          <fieldset>
            <legend>Permissions</legend>
            {PERMISSIONS.map((permission) => (
              <label key={permission} className="check">
                <input
                  type="checkbox"
                  checked={permissions.includes(permission)}
                  onChange={(event) =>
                    setPermissions((current) => (event.target.checked ? [...current, permission] : current.filter((p) => p !== permission)))
                  }
                />
                <span>{permission}</span>
              </label>
            ))}
          </fieldset>
          <FormError message={problem && problem.field() !== 'name' ? problem.explain() : null} />
          <button type="submit">Issue the key</button>
        </form>
      )}
      {issuedKey && (
        <div className="notice">
          <p role="status">
            The new key {issuedKey.name}, shown this once (the service keeps only its hash): <code className="link">{issuedKey.key}</code>
          </p>
          <CopyButton text={issuedKey.key} label="Copy the key" detail={issuedKey.name} />
        </div>
      )}
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke ${revoking?.name ?? ''}?`}
        confirm={`Revoke ${revoking?.name ?? ''}`}
        onCancel={() => setRevoking(null)}
        onConfirm={() => {
          const key = revoking!;
          setRevoking(null);
          if (issued?.id === key.id) setIssued(null);
          void act(() => ok(api.DELETE('/v1/organization/api-keys/{keyId}', { params: { path: { keyId: key.id } } })));
        }}
      >
        <p>Every server using it is refused from the next request, on every instance.</p>
      </ConfirmDialog>
    </section>
  );
}

/** Where an invitation's mail stands, in words. */
function deliveryText(delivery: NonNullable<Invitation['delivery']>): string {
  if (delivery.state === 'sent') return 'mail sent';
  if (delivery.state === 'failed') return `mail failed${delivery.lastError ? `: ${delivery.lastError}` : ''}`;
  return delivery.attempts > 0 ? `mail not delivered yet (${delivery.attempts} attempts)` : 'mail on its way';
}
