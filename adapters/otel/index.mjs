// offloop/otel for ES modules: the instrumentation on @opentelemetry/api's ES build.

import * as api from '@opentelemetry/api';

import spans from './spans.js';

export const { instrument } = spans.createInstrumentation(api);
