-- One row per run: its grouping, its queue model, and the run's cumulative
-- latency, capacity, balance and cost (gold.runs joined with
-- gold.distribution_metrics' cumulative row).
SELECT
  r.run_id, r.source, r.topic, r.grouping, r.label, r.workers, r.splitters, r.messages,
  r.load, r.process_ms, r.work, r.status, r.seconds,
  m.tuples, m.distinct_keys, m.p50_ms, m.p99_ms, m.capacity, m.capacity_vs_key,
  m.imbalance, m.stddev_pct, m.skew_s, m.e_lb, m.dist_cost, m.makespan_ms, m.throughput
FROM gold.runs AS r
JOIN gold.distribution_metrics AS m
  ON m.run_id = r.run_id AND m.scope = 'cumulative'
