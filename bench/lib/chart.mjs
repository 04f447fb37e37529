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
