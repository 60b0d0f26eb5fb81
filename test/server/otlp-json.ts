import type { OtlpExport } from "./otlp-receiver.js";

// OTLP/JSON exports, decoded as the OTLP JSON encoding writes them.

type AttributeValue = string | number | boolean | null;

interface OtlpKeyValue {
  readonly key: string;
  readonly value: {
    readonly stringValue?: string;
    readonly intValue?: number | string;
    readonly doubleValue?: number;
    readonly boolValue?: boolean;
  };
}

function attributesOf(list: readonly OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    attributes[key] =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      value.boolValue ??
      null;
  }
  return attributes;
}

export interface ReceivedSpan {
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly attributes: Record<string, AttributeValue>;
  readonly status: { readonly code?: number };
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly startNanoseconds: bigint;
  readonly endNanoseconds: bigint;
  readonly resource: Record<string, AttributeValue>;
}

export function spansOf(exports: readonly OtlpExport[]): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const each of exports) {
    if (each.path !== "/v1/traces" || each.json === null) continue;
    const request = each.json as {
      resourceSpans: {
        resource: { attributes: OtlpKeyValue[] };
        scopeSpans: {
          spans: {
            name: string;
            kind: number;
            traceId: string;
            spanId: string;
            parentSpanId?: string;
            attributes: OtlpKeyValue[];
            status: { code?: number };
            links?: { traceId: string; spanId: string }[];
            startTimeUnixNano: string | number;
            endTimeUnixNano: string | number;
          }[];
        }[];
      }[];
    };
    for (const resourceSpans of request.resourceSpans) {
      const resource = attributesOf(resourceSpans.resource.attributes);
      for (const scope of resourceSpans.scopeSpans) {
        for (const span of scope.spans) {
          spans.push({
            name: span.name,
            kind: span.kind,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? "",
            attributes: attributesOf(span.attributes),
            status: span.status,
            links: span.links ?? [],
            startNanoseconds: BigInt(span.startTimeUnixNano),
            endNanoseconds: BigInt(span.endTimeUnixNano),
            resource,
          });
        }
      }
    }
  }
  return spans;
}

export interface ReceivedPoint {
  readonly metric: string;
  readonly unit: string;
  readonly attributes: Record<string, AttributeValue>;
  /** A histogram point's count and sum, or a sum's value. */
  readonly count: number;
  readonly sum: number;
}

export function metricPointsOf(exports: readonly OtlpExport[]): ReceivedPoint[] {
  const points: ReceivedPoint[] = [];
  for (const each of exports) {
    if (each.path !== "/v1/metrics" || each.json === null) continue;
    const request = each.json as {
      resourceMetrics: {
        scopeMetrics: {
          metrics: {
            name: string;
            unit?: string;
            histogram?: {
              dataPoints: { attributes: OtlpKeyValue[]; count: number | string; sum?: number }[];
            };
            sum?: {
              dataPoints: { attributes: OtlpKeyValue[]; asInt?: number | string; asDouble?: number }[];
            };
          }[];
        }[];
      }[];
    };
    for (const resourceMetrics of request.resourceMetrics) {
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          for (const point of metric.histogram?.dataPoints ?? []) {
            points.push({
              metric: metric.name,
              unit: metric.unit ?? "",
              attributes: attributesOf(point.attributes),
              count: Number(point.count),
              sum: point.sum ?? 0,
            });
          }
          for (const point of metric.sum?.dataPoints ?? []) {
            const value = Number(point.asInt ?? point.asDouble ?? 0);
            points.push({
              metric: metric.name,
              unit: metric.unit ?? "",
              attributes: attributesOf(point.attributes),
              count: value,
              sum: value,
            });
          }
        }
      }
    }
  }
  return points;
}

/** Whether an export to `path` arrived. */
export function hasPath(path: string) {
  return (exports: readonly OtlpExport[]) => exports.some((each) => each.path === path);
}
