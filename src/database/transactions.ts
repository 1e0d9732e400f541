import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Transaction } from './sql';

/**
 * The one way code opens a transaction. The transaction is a value, handed to the work and passed on by hand to
 * every call that must run in it; nothing carries it implicitly (no async-context storage, which on Node 20
 * would cost every async resource the process creates, the config poll's included).
 */
@Injectable()
export class Transactions {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Opens a transaction on a connection of its own, runs `work` with it, and commits when `work` resolves or
   * rolls back when it rejects (passing the failure on). Each call opens its own: code that must join a
   * transaction takes the `Transaction` as a parameter instead. Statements sent on it once `work` has settled
   * are refused.
   */
  run<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const tx = new Transaction(manager);
      try {
        return await work(tx);
      } finally {
        tx.end();
      }
    });
  }
}
