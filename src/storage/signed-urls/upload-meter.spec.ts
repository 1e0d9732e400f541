import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError } from '../../common/domain-error';
import { StorageErrors } from '../storage.errors';
import { UploadMeter } from './upload-meter';

async function run(chunks: Buffer[], meter: UploadMeter): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(Readable.from(chunks), meter, async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) out.push(chunk);
  });
  return Buffer.concat(out);
}

describe('UploadMeter', () => {
  it('passes the bytes through, counted and hashed', async () => {
    const meter = new UploadMeter({ maxBytes: 10, limitReason: 'test', exactBytes: 6 });
    const out = await run([Buffer.from('abc'), Buffer.from('def')], meter);
    expect(out.toString()).toBe('abcdef');
    expect(meter.bytes).toBe(6);
    expect(meter.checksum()).toBe(createHash('sha256').update('abcdef').digest('hex'));
  });

  it('fails with 413 as soon as the body passes the limit', async () => {
    const meter = new UploadMeter({ maxBytes: 4, limitReason: 'the signed size' });
    await expect(run([Buffer.from('abc'), Buffer.from('def')], meter)).rejects.toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(meter.failure).toBeInstanceOf(DomainError);
  });

  it('fails with the error the limit names, when it is not the plain 413', async () => {
    const meter = new UploadMeter({
      maxBytes: 4,
      limitReason: 'the room left',
      exceeded: () => StorageErrors.allocationRoomExceeded({ allocation: 10, reserved: 6 }),
    });
    await expect(run([Buffer.from('abc'), Buffer.from('def')], meter)).rejects.toMatchObject({
      status: 413,
      code: 'ALLOCATION_EXCEEDED',
      message: expect.stringMatching(/4 bytes left .* 6 of its 10 bytes/),
    });
    expect(meter.failure?.code).toBe('ALLOCATION_EXCEEDED');
  });

  it('fails with 400 when the body is shorter than declared', async () => {
    const meter = new UploadMeter({ maxBytes: 10, limitReason: 'x', exactBytes: 10 });
    await expect(run([Buffer.from('abc')], meter)).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });
});
