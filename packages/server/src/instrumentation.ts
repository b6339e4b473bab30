import type { ConnectionTokens } from './app-connections/connection-tokens.js';
import type { EdgeProxy } from './edge/edge-proxy.js';
import { AppError } from './errors.js';
import type { JobDefinition } from './jobs/job.js';
import type { Mailer } from './mail/mailer.js';
import type { Metrics } from './metrics/metrics.js';

// What `/metrics` counts of the service's parts without their code knowing: wrappers the
// composition root puts around them, each keeping the part's behaviour as it is.

/** Each attempt of each job: its outcome (completed, retried, failed for good) and duration. */
export function measuredJobs(
  definitions: readonly JobDefinition<unknown>[],
  metrics: Pick<Metrics, 'jobRun'>,
): JobDefinition<unknown>[] {
  return definitions.map((definition) => ({
    ...definition,
    async run(payload, job) {
      const startedAt = performance.now();
      const seconds = () => (performance.now() - startedAt) / 1000;
      try {
        await definition.run(payload, job);
      } catch (error) {
        metrics.jobRun(definition.name, job.isLastAttempt ? 'failed' : 'retried', seconds());
        throw error;
      }
      metrics.jobRun(definition.name, 'completed', seconds());
    },
  }));
}

/** Each message handed to the mail server or the outbox, and each that was not. */
export function countedMailer(
  mailer: Mailer,
  transport: string,
  metrics: Pick<Metrics, 'mail'>,
): Mailer {
  return {
    async send(mail, signal) {
      try {
        const delivery = await mailer.send(mail, signal);
        metrics.mail(transport, 'sent');
        return delivery;
      } catch (error) {
        metrics.mail(transport, 'failed');
        throw error;
      }
    },
  };
}

/**
 * Each request for an app connection's token by what it got: the stored token (its expiry is the
 * row's), a refreshed one (a new expiry), or the refusal's status (503 unavailable, 410 dead).
 */
export function countedTokens(
  tokens: ConnectionTokens,
  metrics: Pick<Metrics, 'tokenRequest'>,
): ConnectionTokens {
  return {
    async tokenFor(row) {
      try {
        const token = await tokens.tokenFor(row);
        const stored = row.accessTokenExpiresAt?.toISOString();
        const fresh = stored === token.expiresAt || row.accessTokenExpiresAt === null;
        metrics.tokenRequest(row.provider, fresh ? 'fresh' : 'refreshed');
        return token;
      } catch (error) {
        if (error instanceof AppError && error.code === 'refresh_unavailable') {
          metrics.tokenRequest(row.provider, '503');
        } else if (error instanceof AppError && error.code === 'connection_error') {
          metrics.tokenRequest(row.provider, '410');
        }
        throw error;
      }
    },
  };
}

/** Each request the edge answers, by its status (`none`: cut before its answer was complete). */
export function countedEdge(edge: EdgeProxy, metrics: Pick<Metrics, 'edgeRequest'>): EdgeProxy {
  return {
    ...edge,
    request(req, res) {
      res.once('close', () => metrics.edgeRequest(res.writableFinished ? res.statusCode : 0));
      edge.request(req, res);
    },
  };
}
