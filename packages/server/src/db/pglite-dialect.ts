import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import type { SessionLock } from './session-lock.js';

/**
 * Kysely over PGlite. PGlite is one database session, so a connection is the session lock: a
 * transaction holds it from BEGIN to COMMIT, and no other statement can land inside it.
 * (`kysely-pglite` hands out the session without a lock, which lets concurrent requests run
 * inside each other's transactions.)
 */
export function pgliteDialect(pglite: PGlite, lock: SessionLock): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PgliteDriver(pglite, lock),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

class PgliteDriver implements Driver {
  readonly #releases = new WeakMap<DatabaseConnection, () => void>();

  constructor(
    readonly pglite: PGlite,
    readonly lock: SessionLock,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.lock.acquire();
    const connection = new PgliteConnection(this.pglite);
    this.#releases.set(connection, release);
    return connection;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.#releases.get(connection)?.();
    this.#releases.delete(connection);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }

  async destroy(): Promise<void> {}
}

class PgliteConnection implements DatabaseConnection {
  constructor(readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pglite.query<R>(query.sql, [...query.parameters]);
    return {
      rows: result.rows,
      ...(result.affectedRows !== undefined && {
        numAffectedRows: BigInt(result.affectedRows),
      }),
    };
  }

  // biome-ignore lint/correctness/useYield: PGlite has no cursors; Kysely requires the method.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}
