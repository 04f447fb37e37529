// offloop/metrics for ES modules: the collector on prom-client (one build,
// CommonJS, whichever way it is imported).

import client from 'prom-client';

import metrics from '../../lib/metrics.js';

export const { register } = metrics.createMetrics(client);
