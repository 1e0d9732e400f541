import { Writable } from 'node:stream';

export interface LogLine {
  level: number;
  msg: string;
  requestId?: string;
  method?: string;
  route?: string;
  status?: number;
  durationMs?: number;
  organizationId?: string;
  keyId?: string;
  [field: string]: unknown;
}

/** Everything an app logs (createTestApp's `logDestination`), as written: raw text, and each line parsed. */
export class LogCapture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
  get lines(): LogLine[] {
    return this.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);
  }
  requests(): LogLine[] {
    return this.lines.filter((line) => line.msg === 'request completed' || line.msg === 'request failed');
  }
}
