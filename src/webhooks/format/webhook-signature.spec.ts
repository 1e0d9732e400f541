import { createHmac, timingSafeEqual } from 'node:crypto';
import { newWebhookSecret, signWebhook, webhookHeaders, webhookSignatureHeader } from './webhook-signature';

/**
 * A receiver as the specification describes it (spec/standard-webhooks.md, "Verifying signatures"): the headers' id and
 * timestamp and the raw body, signed with the secret's decoded key, compared in constant time with each `v1`
 * signature of the space-separated list until one matches.
 */
function receiverAccepts(secret: string, headers: Record<string, string>, body: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest();
  return headers['webhook-signature'].split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

describe('signWebhook', () => {
  // The Standard Webhooks project's published test vectors (libraries/*/webhook_test, "sign function works"; the Rust
  // library's test_sign), values only.
  it('gives the signature of the specification libraries’ test vector', () => {
    expect(signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
    expect(
      signWebhook(
        'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
        'msg_27UH4WbU6Z5A5EzD8u03UvzRbpk',
        1649367553,
        '{"email":"test@example.com","username":"test_user"}',
      ),
    ).toBe('v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=');
  });

  it('signs the body as UTF-8 text, as a receiver reads the bytes it was sent', () => {
    const secret = newWebhookSecret();
    const body = '{"name":"Maÿa 🎮"}';
    expect(receiverAccepts(secret, webhookHeaders([secret], 'msg_1', 1700000000, body), body)).toBe(true);
  });

  it('refuses a secret without its prefix or key, a fractional timestamp and an id with a full stop', () => {
    expect(() => signWebhook('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_1', 1, '{}')).toThrow(/whsec_/);
    expect(() => signWebhook('whsec_', 'msg_1', 1, '{}')).toThrow(/key/);
    expect(() => signWebhook(newWebhookSecret(), 'msg_1', 1.5, '{}')).toThrow(/whole unix seconds/);
    expect(() => signWebhook(newWebhookSecret(), 'msg.1', 1, '{}')).toThrow(/full stop/);
  });
});

describe('newWebhookSecret', () => {
  it('is whsec_ and the base64 of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(key).toHaveLength(32);
    expect(key.toString('base64')).toBe(secret.slice('whsec_'.length));
  });

  it('differs every time', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => newWebhookSecret()));
    expect(secrets.size).toBe(50);
  });
});

describe('webhookHeaders', () => {
  const body = '{"type":"flag.changed","timestamp":"2026-11-29T12:00:00.000Z","data":{}}';
  const msgId = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
  const timestamp = 1764417600;

  it('gives the id, the timestamp in unix seconds and the signature', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders([secret], msgId, timestamp, body);
    expect(headers).toEqual({
      'webhook-id': msgId,
      'webhook-timestamp': '1764417600',
      'webhook-signature': signWebhook(secret, msgId, timestamp, body),
    });
    expect(receiverAccepts(secret, headers, body)).toBe(true);
  });

  it('during a rotation carries both signatures, and a receiver holding either secret accepts the delivery', () => {
    const previous = newWebhookSecret();
    const current = newWebhookSecret();
    const headers = webhookHeaders([current, previous], msgId, timestamp, body);
    const signatures = headers['webhook-signature'].split(' ');
    expect(signatures).toEqual([signWebhook(current, msgId, timestamp, body), signWebhook(previous, msgId, timestamp, body)]);
    expect(receiverAccepts(previous, headers, body)).toBe(true);
    expect(receiverAccepts(current, headers, body)).toBe(true);
    expect(receiverAccepts(newWebhookSecret(), headers, body)).toBe(false);
  });

  it('fails verification when the body, the timestamp or the id is changed', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders([secret], msgId, timestamp, body);
    expect(receiverAccepts(secret, headers, body)).toBe(true);
    expect(receiverAccepts(secret, headers, body.replace('flag.changed', 'flag.changes'))).toBe(false);
    expect(receiverAccepts(secret, headers, `${body} `)).toBe(false);
    expect(receiverAccepts(secret, { ...headers, 'webhook-timestamp': String(timestamp + 1) }, body)).toBe(false);
    expect(receiverAccepts(secret, { ...headers, 'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4X' }, body)).toBe(false);
  });

  it('refuses to sign with no secret at all', () => {
    expect(() => webhookSignatureHeader([], msgId, timestamp, body)).toThrow(/at least one secret/);
  });
});
