import type { ReactNode } from 'react';
import { useSignedIn } from '../session';
import { Layout } from './Layout';

/** The webhook pages are for the organization's admins (the API refuses others): anyone else is told so, under `title`. */
export function WebhookAdminsOnly({ title, children }: { title: string; children: ReactNode }) {
  const session = useSignedIn();
  if (session.isAdmin) return <>{children}</>;
  return (
    <Layout title={title}>
      <p>Only the organization’s admins see and change its webhooks.</p>
    </Layout>
  );
}
