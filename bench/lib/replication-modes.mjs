// The ways a database is replicated in the replication benchmark, named
// once for the orchestrator and its child processes: not at all, by
// offloop itself (to a folder or to S3), or by a Litestream sidecar beside
// an offloop that does not replicate. It describes and opens; it measures
// nothing.

import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { S3_KEYS, S3_REGION } from './s3-servers.mjs';

export const MODES = [
  { id: 'off', label: 'replication off', replicator: null, target: null },
  { id: 'offloop-folder', label: 'offloop → folder', replicator: 'offloop', target: 'file' },
  { id: 'offloop-s3', label: 'offloop → S3', replicator: 'offloop', target: 's3' },
  { id: 'litestream-folder', label: 'Litestream sidecar → folder', replicator: 'litestream', target: 'file' },
  { id: 'litestream-s3', label: 'Litestream sidecar → S3', replicator: 'litestream', target: 's3' },
];

export function modeById(id) {
  const mode = MODES.find((m) => m.id === id);
  if (!mode) throw new Error(`unknown replication mode ${id}; one of ${MODES.map((m) => m.id).join(', ')}`);
  return mode;
}

/**
 * Where a mode's replica goes: `{ type: 'file', path }` under `dir`, or
 * `{ type: 's3', endpoint, bucket, prefix }`; null when it does not replicate.
 */
export function replicaFor(mode, { dir, endpoint, bucket, prefix }) {
  if (mode.target === 'file') return { type: 'file', path: path.join(dir, 'replica') };
  if (mode.target === 's3') return { type: 's3', endpoint, bucket, prefix };
  return null;
}

/** offloop's `replica` option for a replica as `replicaFor` describes it. */
export function offloopReplicaOptions(replica, syncIntervalMs) {
  if (replica.type === 'file') return { url: pathToFileURL(replica.path).href, syncInterval: syncIntervalMs };
  return {
    url: `s3://${replica.bucket}/${replica.prefix}`,
    endpoint: replica.endpoint,
    region: S3_REGION,
    ...S3_KEYS,
    syncInterval: syncIntervalMs,
  };
}

/** The child-process arguments that carry a replica's description. */
export function replicaArgs(replica) {
  if (!replica) return [];
  if (replica.type === 'file') return ['--replica-dir', replica.path];
  return ['--endpoint', replica.endpoint, '--bucket', replica.bucket, '--prefix', replica.prefix];
}

/** The replica a child process was given (`replicaArgs` parsed back). */
export function replicaFromArgs(mode, opts) {
  if (mode.target === 'file') return { type: 'file', path: opts['replica-dir'] };
  if (mode.target === 's3') return { type: 's3', endpoint: opts.endpoint, bucket: opts.bucket, prefix: opts.prefix };
  return null;
}

/** The parseArgs options `replicaArgs` fills. */
export const REPLICA_ARG_OPTIONS = {
  'replica-dir': { type: 'string' },
  endpoint: { type: 'string' },
  bucket: { type: 'string' },
  prefix: { type: 'string' },
};
