'use strict';

// offloop/otel for CommonJS: the instrumentation on require('@opentelemetry/api').

const { createInstrumentation } = require('./spans.js');

module.exports = createInstrumentation(require('@opentelemetry/api'));
