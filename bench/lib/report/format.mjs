// Number formats for the generated results tables: one way to write a
// rate, a time, a ratio and a count, so that every cell reads alike. Pure
// functions of their arguments; nothing here reads a results file.

/** A rate per second: 161k/s, 3,665/s, 84/s. */
export function rate(perSecond, unit = '/s') {
  if (perSecond >= 100_000) return `${Math.round(perSecond / 1000)}k${unit}`;
  if (perSecond >= 10_000) return `${(perSecond / 1000).toFixed(1)}k${unit}`;
  return `${Math.round(perSecond).toLocaleString('en-US')}${unit}`;
}

/** A ratio: 1.44×, 12.5×, 830×. */
export function ratio(value) {
  if (value >= 100) return `${Math.round(value)}×`;
  if (value >= 10) return `${value.toFixed(1)}×`;
  return `${value.toFixed(2)}×`;
}

/**
 * How much lower a latency is than its peer's, given peer / offloop: "4.38×
 * lower", or, when it is higher, "1.69× higher" (never "0.59× lower").
 */
export function lowerBy(factor) {
  return factor >= 1 ? `${ratio(factor)} lower` : `${ratio(1 / factor)} higher`;
}

/** Milliseconds: 0.18 ms, 12.0 ms, 256 ms, 2,288 ms. */
export function ms(value) {
  if (value >= 100) return `${Math.round(value).toLocaleString('en-US')} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(2)} ms`;
}

/** Microseconds, one decimal: 18.6 µs. */
export function us(value) {
  return `${value.toFixed(1)} µs`;
}

/** Seconds, one decimal below a minute: 17.1 s. */
export function seconds(value) {
  return `${value.toFixed(1)} s`;
}

/** A whole count with thousands separators: 5,239. */
export function count(value) {
  return Math.round(value).toLocaleString('en-US');
}

/** Megabytes (10^6 bytes), one decimal: 4.2 MB. */
export function megabytes(bytes) {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** The median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
