import { loadConfig } from '../config/app-config';
import { servingLine } from './serving-line';

describe('the boot log line that says where the service is', () => {
  it("names the API, the console and the docs at PUBLIC_URL's default for the PORT in use", () => {
    const config = loadConfig({ PORT: '4123' });
    expect(servingLine(config.urls)).toBe(
      'Serving the API at http://localhost:4123/v1, the console at http://localhost:4123/console, the docs at http://localhost:4123/docs',
    );
  });

  it('names them under PUBLIC_URL when it is set', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://flags.studio.example' });
    expect(servingLine(config.urls)).toBe(
      'Serving the API at https://flags.studio.example/v1, the console at https://flags.studio.example/console, the docs at https://flags.studio.example/docs',
    );
  });
});
