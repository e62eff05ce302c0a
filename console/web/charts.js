// Charts drawn by uPlot (no hand-written charting): a time series and a bar
// chart. Each chart keeps one uPlot instance and feeds it new data on every
// poll; `data-points` on the wrapper says how many non-empty points it holds
// (what a reader, or a test, can check without reading pixels).
import { html, useEffect, useRef } from './vendor/htm-preact.mjs';
import uPlot from './vendor/uPlot.esm.js';

const COLORS = ['#2457c5', '#c53030', '#1f8a4c', '#b7791f'];

function nonEmpty(columns) {
  return columns.reduce((n, col) => n + col.filter((v) => v !== null && v !== undefined && v !== 0).length, 0);
}

function useUplot(makeOpts, data, height) {
  const box = useRef(null);
  const plot = useRef(null);
  useEffect(() => {
    const el = box.current;
    plot.current = new uPlot(makeOpts(Math.max(el.clientWidth, 300), height), data, el);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(el.clientWidth, 300), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);
  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);
  return box;
}

/** Lines over time. `t`: epoch ms; `lines`: [{ label, values, unit }]. */
export function TimeChart({ id, t, lines, height = 200 }) {
  const data = [t.map((ms) => ms / 1000), ...lines.map((l) => l.values)];
  const box = useUplot(
    (width, h) => ({
      width,
      height: h,
      legend: { live: false },
      scales: { x: { time: true } },
      series: [{}, ...lines.map((l, i) => ({ label: l.label, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false, points: { show: false }, value: (_u, v) => (v === null ? '–' : `${v.toFixed(2)}${l.unit ?? ''}`) }))],
      axes: [{}, { size: 60 }],
    }),
    data,
    height,
  );
  return html`<div class="chart" data-testid=${id} data-points=${nonEmpty(data.slice(1))} ref=${box}></div>`;
}

/** Bars with text labels: `labels[i]` under `values[i]`. */
export function BarChart({ id, labels, values, label, height = 200 }) {
  const data = [labels.map((_, i) => i), values];
  const box = useUplot(
    (width, h) => ({
      width,
      height: h,
      legend: { show: false },
      scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      series: [{}, { label, fill: 'rgba(36, 87, 197, 0.35)', stroke: COLORS[0], paths: uPlot.paths.bars({ size: [0.8, 60] }), points: { show: false } }],
      axes: [{ splits: () => labels.map((_, i) => i), values: () => labels, rotate: 0, size: 40 }, { size: 50 }],
    }),
    data,
    height,
  );
  return html`<div class="chart" data-testid=${id} data-points=${nonEmpty([values])} ref=${box}></div>`;
}
