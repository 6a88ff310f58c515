import { createRequire } from 'node:module';

/** One sample of a metric family as parse-prometheus-text-format returns it (values are strings). */
export interface MetricSample {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  quantiles?: Record<string, string>;
  count?: string;
  sum?: string;
}

/** One metric family: `# HELP` / `# TYPE` and its samples. */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: MetricSample[];
}

// The package ships no type declarations; this is its whole API.
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => MetricFamily[];

/**
 * Parses a Prometheus text exposition into metric families, keyed by name.
 *
 * parse-prometheus-text-format folds every label set of a histogram or summary into one
 * sample without labels (it only handles unlabelled ones). So those families are read a
 * second time with their `# TYPE` line left out, which makes each `_bucket`, `_sum` and
 * `_count` series a plain labelled sample, and regrouped per label set.
 */
export function parsePrometheus(text: string): Map<string, MetricFamily> {
  const families = new Map(parse(text).map((family) => [family.name, family]));
  const grouped = [...families.values()].filter((f) => f.type === 'HISTOGRAM' || f.type === 'SUMMARY');
  if (grouped.length === 0) return families;
  const typeLines = new Set(grouped.map((f) => `# TYPE ${f.name} ${f.type.toLowerCase()}`));
  // A series name recurs once per label set (buckets, sum, count of one set, then the next).
  const series = new Map<string, MetricSample[]>();
  for (const f of parse(text.split('\n').filter((line) => !typeLines.has(line)).join('\n'))) {
    series.set(f.name, [...(series.get(f.name) ?? []), ...f.metrics]);
  }
  for (const family of grouped) family.metrics = regroup(family, series);
  return families;
}

function regroup(family: MetricFamily, series: Map<string, MetricSample[]>): MetricSample[] {
  const [part, key] = family.type === 'HISTOGRAM' ? (['buckets', 'le'] as const) : (['quantiles', 'quantile'] as const);
  const samples = new Map<string, MetricSample>();
  const sampleOf = (labels: Record<string, string> = {}): MetricSample => {
    const { [key]: _drop, ...rest } = labels;
    const id = JSON.stringify(Object.entries(rest).sort());
    let sample = samples.get(id);
    if (!sample) samples.set(id, (sample = { labels: rest }));
    return sample;
  };
  const valued = family.type === 'HISTOGRAM' ? `${family.name}_bucket` : family.name;
  for (const s of series.get(valued) ?? []) ((sampleOf(s.labels)[part] ??= {})[s.labels?.[key] ?? ''] = s.value ?? '');
  for (const s of series.get(`${family.name}_sum`) ?? []) sampleOf(s.labels).sum = s.value;
  for (const s of series.get(`${family.name}_count`) ?? []) sampleOf(s.labels).count = s.value;
  return [...samples.values()];
}
