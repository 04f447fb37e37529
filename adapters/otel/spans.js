'use strict';

// offloop/otel: turns the `offloop:<operation>` tracing channels into
// OpenTelemetry CLIENT spans with the database conventions' attributes
// (db.system.name, db.namespace, db.query.text, db.operation.name,
// db.collection.name, error.type). It only subscribes and reads the
// channels' contexts: it never calls offloop, never changes a call, and
// records parameter values only when asked to (`parameters: true`).

const diagnosticsChannel = require('node:diagnostics_channel');

// The operations whose channels offloop publishes (docs/observability.md).
const OPERATIONS = ['query', 'exec', 'transaction', 'batch', 'read', 'checkpoint', 'sync', 'restore', 'promote', 'open'];

// The statement's first keyword, after any comments and blanks.
const KEYWORD = /^(?:\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/;

// The one table a simple statement names; a statement that names several
// (a join, a list of tables, a sub-select) has none, as the conventions ask.
const TARGET = {
  __proto__: null,
  SELECT: /\bFROM\s+("[^"]+"|`[^`]+`|\[[^\]]+\]|[\w$.]+)/i,
  INSERT: /\bINTO\s+("[^"]+"|`[^`]+`|\[[^\]]+\]|[\w$.]+)/i,
  REPLACE: /\bINTO\s+("[^"]+"|`[^`]+`|\[[^\]]+\]|[\w$.]+)/i,
  UPDATE: /^\s*UPDATE\s+(?:OR\s+\w+\s+)?("[^"]+"|`[^`]+`|\[[^\]]+\]|[\w$.]+)/i,
  DELETE: /\bFROM\s+("[^"]+"|`[^`]+`|\[[^\]]+\]|[\w$.]+)/i,
};
const SEVERAL = /\bJOIN\b|\bFROM\s+[^;]*?,|\(\s*SELECT\b|\bUNION\b/i;

/** `{ operation, collection }` of a single statement's text (either may be undefined). */
function summarize(sql) {
  const keyword = KEYWORD.exec(sql)?.[1]?.toUpperCase();
  if (keyword === undefined) return {};
  const target = TARGET[keyword];
  if (target === undefined || SEVERAL.test(sql)) return { operation: keyword };
  const name = target.exec(sql)?.[1];
  return { operation: keyword, collection: name?.replace(/^["`[]|["`\]]$/g, '') };
}

/** The span's name and its attributes at start, for a context of `offloop:<operation>`. */
function describeStart(operation, ctx, withParameters) {
  const attributes = {
    'db.system.name': 'sqlite',
    'db.namespace': ctx.database,
    'offloop.method': ctx.method,
  };
  let name;
  if (operation === 'query' || operation === 'exec') {
    attributes['db.query.text'] = ctx.sql;
    const { operation: op, collection } = operation === 'query' ? summarize(ctx.sql) : {};
    if (op !== undefined) attributes['db.operation.name'] = op;
    if (collection !== undefined) attributes['db.collection.name'] = collection;
    name = op === undefined ? ctx.method : collection === undefined ? op : `${op} ${collection}`;
    if (withParameters && Array.isArray(ctx.parameters)) addParameters(attributes, ctx.parameters);
  } else if (operation === 'batch') {
    attributes['db.operation.name'] = 'BATCH';
    attributes['db.operation.batch.size'] = ctx.statements;
    name = 'BATCH';
  } else {
    attributes['db.operation.name'] = ctx.method;
    if (ctx.mode !== undefined) attributes['offloop.mode'] = String(ctx.mode);
    name = ctx.method;
  }
  return { name, attributes };
}

/** `db.query.parameter.<key>`: positional ones by index, named ones by name. */
function addParameters(attributes, parameters) {
  parameters.forEach((value, index) => {
    if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
      for (const [key, named] of Object.entries(value)) attributes[`db.query.parameter.${key}`] = shown(named);
    } else {
      attributes[`db.query.parameter.${index}`] = shown(value);
    }
  });
}

function shown(value) {
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`;
  return String(value);
}

/** What a settled call's context adds: rows, changes, the thread and its wait. */
function describeEnd(span, ctx) {
  if (typeof ctx.rows === 'number') span.setAttribute('db.response.returned_rows', ctx.rows);
  if (ctx.changes !== undefined) span.setAttribute('offloop.changes', Number(ctx.changes));
  if (ctx.thread !== undefined) span.setAttribute('offloop.thread', ctx.thread);
  if (ctx.queueWait !== undefined) span.setAttribute('offloop.queue_wait_ms', ctx.queueWait);
  if (ctx.runTime !== undefined) span.setAttribute('offloop.run_ms', ctx.runTime);
}

function errorType(err) {
  if (err === null || typeof err !== 'object') return '_OTHER';
  return err.sqliteCode ?? err.code ?? err.name ?? '_OTHER';
}

/** offloop/otel for one copy of `@opentelemetry/api`. */
function createInstrumentation(api) {
  const { SpanKind, SpanStatusCode, context, trace } = api;

  /**
   * Subscribes to every `offloop:<operation>` channel and makes a CLIENT
   * span of each call: its parent is the span active where the call was
   * made, or the span of the transaction or read snapshot it ran in.
   * Returns a function that unsubscribes (calling it again does nothing).
   */
  function instrument(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('options must be an object');
    const provider = options.tracerProvider ?? trace.getTracerProvider();
    const tracer = provider.getTracer('offloop');
    const withParameters = options.parameters === true;
    // Each traced call's context → its span, until the span ends.
    const spans = new WeakMap();

    const finish = (ctx) => {
      const span = spans.get(ctx);
      if (span === undefined) return;
      spans.delete(ctx);
      describeEnd(span, ctx);
      span.end();
    };

    const subscriptions = OPERATIONS.map((operation) => {
      const handlers = {
        start(ctx) {
          const { name, attributes } = describeStart(operation, ctx, withParameters);
          const parentSpan = ctx.parent != null ? spans.get(ctx.parent) : undefined;
          const parent = parentSpan === undefined ? context.active() : trace.setSpan(context.active(), parentSpan);
          spans.set(ctx, tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent));
        },
        end(ctx) {
          // A call that threw before it was queued ends here; others at asyncEnd.
          if ('error' in ctx) finish(ctx);
        },
        asyncEnd: finish,
        error(ctx) {
          const span = spans.get(ctx);
          if (span === undefined) return;
          const err = ctx.error;
          span.setAttribute('error.type', String(errorType(err)));
          if (typeof err?.errcode === 'number') span.setAttribute('db.response.status_code', String(err.errcode));
          if (err instanceof Error) span.recordException(err);
          span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        },
      };
      const channel = diagnosticsChannel.tracingChannel(`offloop:${operation}`);
      channel.subscribe(handlers);
      return { channel, handlers };
    });

    let subscribed = true;
    return function uninstrument() {
      if (!subscribed) return;
      subscribed = false;
      for (const { channel, handlers } of subscriptions) channel.unsubscribe(handlers);
    };
  }

  return { instrument };
}

module.exports = { createInstrumentation, OPERATIONS };
