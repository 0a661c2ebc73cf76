/**
 * Bar charts drawn as SVG (no library): one bar per period, stacked series,
 * a value axis with round steps, day labels, and a text summary for screen
 * readers.
 */
import { h, svg } from './dom.ts';

/** One stacked part of each bar. */
export interface Series {
  label: string;
  /** A CSS class that colours it (see styles.css). */
  className: string;
  values: number[];
}

const WIDTH = 720;
const HEIGHT = 240;
const LEFT = 40;
const BOTTOM = 28;
const TOP = 12;

/** The top of the value axis: four whole-number steps (1, 2, 3 or 5 times a power of ten) that reach `value`. */
function niceMax(value: number): number {
  const wanted = Math.max(1, value / 4);
  const power = 10 ** Math.floor(Math.log10(wanted));
  for (const factor of [1, 2, 3, 5, 10]) if (wanted <= power * factor) return 4 * power * factor;
  return 40 * power;
}

/** A stacked bar chart with a legend. */
export function barChart(title: string, labels: string[], series: Series[]): HTMLElement {
  const totals = labels.map((_, i) => series.reduce((sum, part) => sum + (part.values[i] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = (WIDTH - LEFT) / Math.max(1, labels.length);
  const barWidth = Math.max(4, slot * 0.7);
  const y = (value: number): number => TOP + plotHeight - (value / max) * plotHeight;

  const chart = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'chart', role: 'img', 'aria-label': title });
  for (let i = 0; i <= 4; i++) {
    const value = (max / 4) * i;
    chart.append(
      svg('line', { x1: LEFT, x2: WIDTH, y1: y(value), y2: y(value), class: 'chart-grid' }),
      svg('text', { x: LEFT - 6, y: y(value) + 4, class: 'chart-axis', 'text-anchor': 'end' }, String(Math.round(value * 10) / 10)),
    );
  }
  labels.forEach((label, i) => {
    const x = LEFT + slot * i + (slot - barWidth) / 2;
    let base = 0;
    for (const part of series) {
      const value = part.values[i] ?? 0;
      if (value > 0) {
        chart.append(
          svg(
            'rect',
            { x, y: y(base + value), width: barWidth, height: y(base) - y(base + value), class: part.className },
            svg('title', {}, `${label}: ${value} ${part.label.toLowerCase()}`),
          ),
        );
      }
      base += value;
    }
    const every = Math.ceil(labels.length / 10);
    if (i % every === 0)
      chart.append(svg('text', { x: x + barWidth / 2, y: HEIGHT - 8, class: 'chart-axis', 'text-anchor': 'middle' }, label));
  });
  const legend = h(
    'ul',
    { class: 'legend' },
    ...series.map((part) =>
      h('li', {}, h('span', { class: `swatch ${part.className}` }), `${part.label}: ${part.values.reduce((a, b) => a + b, 0)}`),
    ),
  );
  return h('figure', { class: 'chart-figure' }, h('figcaption', {}, title), chart, legend);
}
