import type { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsServiceManager } from 'nestjs-cls';

/**
 * Keeps nestjs-cls's `AsyncLocalStorage` switched on only while a transaction runs.
 *
 * On Node 20, an enabled `AsyncLocalStorage` costs every async resource and promise the process creates a
 * hook call that copies the context into it, whether or not anything reads it: every config poll pays it,
 * though a poll never touches a transaction. nestjs-cls enables its storage when it is imported, and Node
 * keeps a storage enabled for good once it has run. Transactions are the only reason the storage exists
 * here, so it is disabled at start-up, enabled by the storage itself when a transaction starts, and disabled
 * again when the last one running has settled. While it is disabled, `TransactionHost.tx` answers the
 * non-transactional fallback, as it would outside any transaction. The bench measured what it buys (README,
 * Sizing).
 */
export class TransactionContextGate {
  private running = 0;

  constructor(private readonly storage: AsyncLocalStorage<unknown>) {
    storage.disable();
  }

  /** Whether the storage is off: no transaction is running, and async resources are created without a hook. */
  get closed(): boolean {
    return this.running === 0;
  }

  async during<T>(run: () => Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await run();
    } finally {
      this.running -= 1;
      if (this.running === 0) this.storage.disable();
    }
  }
}

/** nestjs-cls's one storage, which carries transactions; it keeps it private, in the global ClsService. */
export function transactionStorage(): AsyncLocalStorage<unknown> {
  return (ClsServiceManager.getClsService() as unknown as { als: AsyncLocalStorage<unknown> }).als;
}

let gate: TransactionContextGate | undefined;

/** The process's one gate, over that storage (shared by every Nest application in the process). */
export function transactionContextGate(): TransactionContextGate {
  gate ??= new TransactionContextGate(transactionStorage());
  return gate;
}

/**
 * The one way code opens a transaction: every repository's `Sql` inside `run` writes through it, and a `run`
 * inside another joins the outer one. Nothing else calls `TransactionHost.withTransaction` (or nestjs-cls's
 * `run`), so that the context storage is on only while a transaction runs (see TransactionContextGate).
 */
@Injectable()
export class Transactions {
  private readonly gate = transactionContextGate();

  constructor(private readonly host: TransactionHost<TransactionalAdapterTypeOrm>) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.gate.during(() => this.host.withTransaction(work));
  }

  /** Whether the caller runs inside a transaction. */
  get active(): boolean {
    return this.host.isTransactionActive();
  }
}
