import { Injectable } from '@nestjs/common';

/** Resolves when what it checks is usable now; rejects saying why not. */
export type ReadinessCheck = () => Promise<void>;

/**
 * The checks other modules add to readiness (storage registers its object store): health runs every
 * registered check, each with its timeout, without knowing what it checks.
 */
@Injectable()
export class ReadinessChecks {
  private readonly checks = new Map<string, ReadinessCheck>();

  register(name: string, check: ReadinessCheck): void {
    if (this.checks.has(name)) throw new Error(`A readiness check named ${name} is already registered`);
    this.checks.set(name, check);
  }

  entries(): IterableIterator<[string, ReadinessCheck]> {
    return this.checks.entries();
  }
}
