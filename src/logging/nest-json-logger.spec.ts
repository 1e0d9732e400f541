import { Writable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { rootLogger } from './logging.module';
import { NestJsonLogger } from './nest-json-logger';

describe('NestJsonLogger', () => {
  let text: string;
  let logger: Logger;
  beforeEach(() => {
    text = '';
    const capture = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        done();
      },
    });
    Logger.overrideLogger(new NestJsonLogger(rootLogger({ level: 'debug', format: 'json' }, capture)));
    logger = new Logger('Bootstrap');
  });
  afterAll(() => Logger.overrideLogger(['error', 'warn']));

  const lines = () =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it("writes Nest's lines as JSON with their level and context, at the configured level", () => {
    logger.log('Serving');
    logger.warn('Careful');
    logger.verbose('Below the level');
    expect(lines()).toEqual([
      { level: 30, time: expect.any(String), context: 'Bootstrap', msg: 'Serving' },
      { level: 40, time: expect.any(String), context: 'Bootstrap', msg: 'Careful' },
    ]);
  });

  it('keeps an error and its stack', () => {
    logger.error('Shutdown failed', 'Error: boom\n    at somewhere (file.ts:1:1)');
    logger.error(new Error('thrown'));
    const [withStack, thrown] = lines();
    expect(withStack).toMatchObject({
      level: 50,
      context: 'Bootstrap',
      msg: 'Shutdown failed',
      err: { stack: expect.stringContaining('at somewhere') },
    });
    expect(thrown).toMatchObject({ level: 50, context: 'Bootstrap', msg: 'thrown', err: { message: 'thrown' } });
  });

  it("leaves out RoutesResolver's controller lines, which name paths under an excluded prefix", () => {
    new Logger('RoutesResolver').log('HealthController {/v1/health}:');
    new Logger('RouterExplorer').log('Mapped {/health, GET} route');
    expect(lines().map((line) => line.msg)).toEqual(['Mapped {/health, GET} route']);
  });
});
