// Charts drawn by uPlot (no hand-written charting): a time series and a bar
// chart. Each chart keeps one uPlot instance and feeds it new data on every
// poll; `data-points` on the wrapper says how many non-empty points it holds
// (what a reader, or a test, can check without reading pixels).
import { html, useEffect, useRef } from './vendor/htm-preact.mjs';
import uPlot from './vendor/uPlot.esm.js';

const COLORS = ['#2457c5', '#c53030', '#1f8a4c', '#b7791f'];

/** Time axes in UTC, 24-hour, like every table (format.js): uPlot's default is the browser's zone, 12-hour. */
const utcDate = (s) => uPlot.tzDate(new Date(s * 1000), 'Etc/UTC');
// uPlot's tick formats: [smallest tick step (s), format, then the format when the year, month, day, hour, minute, second rolls over, 1: append it].
const UTC_TICKS = [
  [86_400, '{YYYY}-{MM}-{DD}', null, null, null, null, null, null, 1],
  [60, '{HH}:{mm}', '\n{YYYY}-{MM}-{DD}', null, '\n{MM}-{DD}', null, null, null, 1],
  [1, ':{ss}', '\n{YYYY}-{MM}-{DD} {HH}:{mm}', null, '\n{MM}-{DD} {HH}:{mm}', null, '\n{HH}:{mm}', null, 1],
];
/** Tick steps (s): whole seconds, as the series are sampled. */
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 21_600, 43_200, 86_400];

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

/** Lines over time (a UTC time axis). `t`: epoch ms; `lines`: [{ label, values, unit }]. */
export function TimeChart({ id, t, lines, height = 200 }) {
  const data = [t.map((ms) => ms / 1000), ...lines.map((l) => l.values)];
  const box = useUplot(
    (width, h) => ({
      width,
      height: h,
      legend: { live: false },
      tzDate: utcDate,
      scales: { x: { time: true } },
      series: [{ label: 'time (UTC)' }, ...lines.map((l, i) => ({ label: l.label, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false, points: { show: false }, value: (_u, v) => (v === null ? '–' : `${v.toFixed(2)}${l.unit ?? ''}`) }))],
      axes: [{ values: UTC_TICKS, incrs: TIME_STEPS, label: 'UTC', labelSize: 20 }, { size: 60 }],
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
