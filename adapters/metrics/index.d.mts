// Types of offloop/metrics for ES module importers: offloop's Prometheus metrics on a prom-client Registry.

import type { Registry } from 'prom-client';

export interface RegisterOptions {
  /**
   * Paths of the databases that get series of their own (label `db`, the
   * absolute path). Every other database counts only in the series without
   * `db`. Default: none.
   */
  databases?: string[];
}

/**
 * Adds offloop's metrics to `registry`. Returns a function that removes
 * them and stops counting.
 */
export declare function register(registry: Registry, options?: RegisterOptions): () => void;
