'use strict';

// offloop/metrics for CommonJS: the collector on require('prom-client').

const { createMetrics } = require('../../lib/metrics.js');

module.exports = createMetrics(require('prom-client'));
