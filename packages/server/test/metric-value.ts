import type { Registry } from 'prom-client';

/**
 * The value of a counter or gauge series whose labels include `labels` (0 when none yet), or of
 * a histogram's `_count` series: what a scrape would report right now.
 */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  // Histograms name each series (`_bucket`, `_sum`, `_count`); counters and gauges do not.
  const { values } = (await metric.get()) as {
    values: { value: number; labels: Record<string, unknown>; metricName?: string }[];
  };
  const matches = values.filter(
    (v) =>
      (v.metricName === undefined || v.metricName === `${name}_count`) &&
      Object.entries(labels).every(([key, value]) => String(v.labels[key]) === value),
  );
  return matches.reduce((sum, v) => sum + v.value, 0);
}
