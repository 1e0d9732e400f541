import { ConfigValidationError, loadConfig } from './app-config';

describe('flag allowance levels (FLAGS_ALLOWED_FREE, FLAGS_ALLOWED_SUBSCRIBED)', () => {
  it("are the spec's 5 and 50 by default", () => {
    expect(loadConfig({}).flagAllowances).toEqual({ free: 5, subscribed: 50 });
  });

  it('take whole numbers from 1 to 10,000, each on its own', () => {
    expect(loadConfig({ FLAGS_ALLOWED_FREE: '200', FLAGS_ALLOWED_SUBSCRIBED: '10000' }).flagAllowances).toEqual({ free: 200, subscribed: 10_000 });
    expect(loadConfig({ FLAGS_ALLOWED_FREE: ' 1 ' }).flagAllowances).toEqual({ free: 1, subscribed: 50 });
    expect(loadConfig({ FLAGS_ALLOWED_SUBSCRIBED: '500' }).flagAllowances).toEqual({ free: 5, subscribed: 500 });
    expect(loadConfig({ FLAGS_ALLOWED_FREE: '' }).flagAllowances.free).toBe(5);
  });

  it.each([
    ['FLAGS_ALLOWED_FREE', '0', 'must be between 1 and 10000, got 0'],
    ['FLAGS_ALLOWED_FREE', '10001', 'must be between 1 and 10000, got 10001'],
    ['FLAGS_ALLOWED_FREE', '-5', 'must be a whole number, got "-5"'],
    ['FLAGS_ALLOWED_SUBSCRIBED', '2.5', 'must be a whole number, got "2.5"'],
    ['FLAGS_ALLOWED_SUBSCRIBED', '1,000', 'must be a whole number, got "1,000"'],
    ['FLAGS_ALLOWED_SUBSCRIBED', 'unlimited', 'must be a whole number, got "unlimited"'],
    ['FLAGS_ALLOWED_SUBSCRIBED', '1e3', 'must be a whole number, got "1e3"'],
  ])('refuses %s=%s, naming the variable', (variable, value, rule) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    expect((error as ConfigValidationError).variable).toBe(variable);
    expect((error as Error).message).toBe(`Invalid configuration: ${variable} ${rule}`);
  });
});
