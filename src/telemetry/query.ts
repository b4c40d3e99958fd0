import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { db as dbMetrics, statementKind } from './metrics.ts';
import { tracingOn } from './tracing.ts';

/**
 * Times one database statement (tender_db_query_duration_seconds) and, with tracing on, makes it
 * a child span of the request or job it runs for. The store drivers (store/db/pg.ts, lite.ts)
 * call it around every statement; PGlite has no driver instrumentation of its own, and one
 * wrapper for both stores keeps their spans alike. The span holds the statement's text, whose
 * values are always parameters ($1...), never inlined; cut at 300 characters (the start names the
 * statement, and every character is serialized for export).
 */
export function observeQuery<T>(store: 'postgres' | 'pglite', sql: string, run: () => Promise<T>): Promise<T> {
  const kind = statementKind(sql);
  const end = dbMetrics.duration.startTimer({ store, statement: kind });
  // nothing runs inside a statement's span, so it need not become the active context (cheaper)
  const span = tracingOn()
    ? trace.getTracer('tender').startSpan(`db ${kind}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': store === 'postgres' ? 'postgresql' : 'pglite',
          'db.query.text': sql.length > 300 ? sql.slice(0, 300) + '…' : sql,
        },
      })
    : undefined;
  return run().then(
    (r) => {
      end();
      span?.end();
      return r;
    },
    (err: unknown) => {
      end();
      span?.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name });
      span?.end();
      throw err;
    },
  );
}
