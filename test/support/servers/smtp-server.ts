import { Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { freePort } from '../../../src/common/free-port';

/** A message as the server received it. */
export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  /** Header names lowercased, folded lines joined. */
  headers: Record<string, string>;
  from: string;
  to: string;
  subject: string;
  messageId: string;
  /** Everything after the headers, as sent (MIME parts and all). */
  body: string;
  raw: string;
}

/**
 * What the server does with the next connections: `accept` them; `hold` them (never greet, never answer: a server
 * that hangs); refuse every recipient for good (`refuse-recipients`, 550). `stop()` is a server that is down.
 */
export type SmtpMode = 'accept' | 'hold' | 'refuse-recipients';

export interface SmtpTestServer {
  port: number;
  /** SMTP_URL for this server, with its credentials. */
  url: string;
  user: string;
  password: string;
  /** Every message received, in order. */
  readonly received: ReceivedMail[];
  mode: SmtpMode;
  /** How long the server waits before it answers a message it received (a slow server): 0 by default. */
  replyDelayMs: number;
  /** Resolves once `count` messages were received in all (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Down: the port refuses connections, and the ones open (held ones too) are cut. */
  stop(): Promise<void>;
  /** Up again on the same port (nothing to do when it is up). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real SMTP server (the `smtp-server` package) on a free loopback port, requiring a login (AUTH PLAIN or LOGIN
 * without TLS, as on loopback), recording what it receives. No STARTTLS: nothing on loopback to protect.
 */
export async function startSmtpServer(
  credentials: { user: string; password: string } = { user: 'flagstore', password: 'smtp-pass-1f4e9' },
): Promise<SmtpTestServer> {
  const port = await freePort();
  const received: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  let server: SMTPServer | undefined;
  const sockets = new Set<Socket>();

  const api: SmtpTestServer = {
    port,
    url: `smtp://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}`,
    ...credentials,
    received,
    mode: 'accept',
    replyDelayMs: 0,
    waitFor: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(received);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`The SMTP server received ${received.length} messages, not ${count}, within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    start: async () => {
      if (server) return;
      server = new SMTPServer({
        logger: false,
        disabledCommands: ['STARTTLS'],
        allowInsecureAuth: true,
        authMethods: ['PLAIN', 'LOGIN'],
        closeTimeout: 100,
        onConnect: (_session, callback) => {
          if (api.mode !== 'hold') callback();
        },
        onAuth: (auth, _session, callback) => {
          if (auth.username === credentials.user && auth.password === credentials.password) callback(null, { user: auth.username });
          else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
        },
        onRcptTo: (_address, _session, callback) => {
          if (api.mode === 'refuse-recipients') callback(Object.assign(new Error('No such mailbox here'), { responseCode: 550 }));
          else callback();
        },
        onData: (stream, session, callback) => {
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            const envelope = {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            };
            received.push(parseMail(raw, envelope));
            for (const waiter of [...waiters]) waiter();
            if (api.replyDelayMs > 0) setTimeout(() => callback(), api.replyDelayMs);
            else callback();
          });
        },
      });
      server.on('error', () => undefined);
      const net = (server as unknown as { server: import('node:net').Server }).server;
      net.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve, reject) => {
        net.once('error', reject);
        server!.listen(port, '127.0.0.1', () => {
          net.off('error', reject);
          resolve();
        });
      });
    },
    stop: async () => {
      const running = server;
      server = undefined;
      if (!running) return;
      const closed = new Promise<void>((resolve) => running.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    close: () => api.stop(),
  };
  await api.start();
  return api;
}

function parseMail(raw: string, envelope: ReceivedMail['envelope']): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    envelope,
    headers,
    from: headers.from ?? '',
    to: headers.to ?? '',
    subject: headers.subject ?? '',
    messageId: headers['message-id'] ?? '',
    body: raw.slice(split + 4),
    raw,
  };
}
