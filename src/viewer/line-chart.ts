import { columnHeads } from "./column-heads.js";
import { element } from "./element.js";

const svgNamespace = "http://www.w3.org/2000/svg";

export interface ChartSeries {
  readonly name: string;
  /** One value per bucket; null where there is nothing to show (no runs). */
  readonly values: readonly (number | null)[];
}

function svg<Tag extends keyof SVGElementTagNameMap>(
  tag: Tag,
  attributes: Readonly<Record<string, string | number>>,
  text?: string,
): SVGElementTagNameMap[Tag] {
  const made = document.createElementNS(svgNamespace, tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, String(value));
  if (text !== undefined) made.textContent = text;
  return made;
}

const width = 640;
const height = 200;
const margin = { left: 56, right: 12, top: 12, bottom: 28 };

/**
 * A line chart of one or more series over the buckets `labels` names, drawn as SVG (no library), with a table of
 * the same figures beside it for those who do not see the chart: the chart is an image with a label, the table
 * the accessible form.
 */
export function lineChart(options: {
  readonly id: string;
  readonly title: string;
  readonly labels: readonly string[];
  readonly series: readonly ChartSeries[];
  readonly format: (value: number) => string;
}): HTMLElement {
  const { labels, series, format } = options;
  const values = series.flatMap((line) => line.values.filter((value): value is number => value !== null));
  const top = Math.max(1e-9, ...values);
  const x = (index: number) =>
    margin.left +
    (labels.length <= 1 ? 0 : (index * (width - margin.left - margin.right)) / (labels.length - 1));
  const y = (value: number) => height - margin.bottom - (value / top) * (height - margin.top - margin.bottom);
  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-labelledby": `${options.id}-title`,
    class: "chart",
  });
  chart.appendChild(svg("title", { id: `${options.id}-title` }, options.title));
  chart.appendChild(
    svg("line", { x1: margin.left, x2: width - margin.right, y1: y(0), y2: y(0), class: "axis" }),
  );
  chart.appendChild(
    svg("text", { x: margin.left - 6, y: y(top) + 4, "text-anchor": "end", class: "tick" }, format(top)),
  );
  chart.appendChild(
    svg("text", { x: margin.left - 6, y: y(0) + 4, "text-anchor": "end", class: "tick" }, format(0)),
  );
  if (labels.length > 0) {
    chart.appendChild(
      svg("text", { x: x(0), y: height - 8, "text-anchor": "start", class: "tick" }, labels[0] as string),
    );
    chart.appendChild(
      svg(
        "text",
        { x: x(labels.length - 1), y: height - 8, "text-anchor": "end", class: "tick" },
        labels.at(-1) as string,
      ),
    );
  }
  series.forEach((line, index) => {
    const points = line.values
      .map((value, at) => (value === null ? null : `${x(at).toFixed(1)},${y(value).toFixed(1)}`))
      .filter((point): point is string => point !== null);
    if (points.length > 1)
      chart.appendChild(svg("polyline", { points: points.join(" "), class: `line line-${index % 6}` }));
    for (const point of points) {
      const [cx, cy] = point.split(",");
      chart.appendChild(
        svg("circle", { cx: cx as string, cy: cy as string, r: 2.5, class: `dot line-${index % 6}` }),
      );
    }
  });
  const legend = element(
    "ul",
    { class: "legend" },
    series.map((line, index) =>
      element(
        "li",
        {},
        element("span", { class: `swatch line-${index % 6}`, "aria-hidden": "true" }),
        line.name,
      ),
    ),
  );
  const rows = labels
    .map((label, at) => ({ label, cells: series.map((line) => line.values[at] ?? null) }))
    .filter((row) => row.cells.some((cell) => cell !== null));
  const table = element(
    "details",
    {},
    element("summary", {}, `${options.title}: the figures`),
    element(
      "table",
      {},
      columnHeads(["From", ...series.map((line) => line.name)]),
      element(
        "tbody",
        {},
        rows.map((row) =>
          element(
            "tr",
            {},
            element("th", { scope: "row" }, row.label),
            row.cells.map((cell) => element("td", { class: "number" }, cell === null ? "—" : format(cell))),
          ),
        ),
      ),
    ),
  );
  return element(
    "figure",
    { class: "chart-figure", id: options.id },
    element("figcaption", {}, options.title),
    chart,
    legend,
    table,
  );
}
