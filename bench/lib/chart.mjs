// Charts: a Vega-Lite spec compiled by vega-lite and rendered to SVG by
// vega's headless View (no canvas, no browser).

import fs from 'node:fs';

import * as vega from 'vega';
import * as vegaLite from 'vega-lite';

/** Renders a Vega-Lite spec to an SVG string. */
export async function renderSvg(vegaLiteSpec) {
  const { spec } = vegaLite.compile(vegaLiteSpec);
  const view = new vega.View(vega.parse(spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Renders a Vega-Lite spec into an SVG file. */
export async function writeSvg(file, vegaLiteSpec) {
  fs.writeFileSync(file, `${await renderSvg(vegaLiteSpec)}\n`);
}

/**
 * One panel of horizontal bars, one per label, for the rows of `data` whose
 * `metric` is `metric` (rows are `{ label, metric, value }`), each bar with
 * its value printed in d3 `format`; `labels` gives the order.
 */
export function labelledBars(metric, format, labels) {
  return {
    title: { text: metric, fontSize: 12 },
    transform: [{ filter: { field: 'metric', equal: metric } }],
    width: 260,
    height: { step: 22 },
    layer: [
      {
        mark: 'bar',
        encoding: {
          y: { field: 'label', type: 'nominal', sort: labels, title: null, axis: { labelLimit: 320 } },
          x: { field: 'value', type: 'quantitative', title: null },
          color: { field: 'label', type: 'nominal', sort: labels, legend: null },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 3, fontSize: 10 },
        encoding: {
          y: { field: 'label', type: 'nominal', sort: labels },
          x: { field: 'value', type: 'quantitative' },
          text: { field: 'value', type: 'quantitative', format },
        },
      },
    ],
  };
}
