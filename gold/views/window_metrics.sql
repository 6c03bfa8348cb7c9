-- One row per run and aggregation window: the window's balance and cost, with
-- the run's grouping, ready to plot over event time.
SELECT
  r.run_id, r.topic, r.grouping, r.label, r.workers,
  m.window_start_ms, timestamp_millis(m.window_start_ms) AS window_start,
  m.tuples, m.distinct_keys, m.imbalance, m.stddev_pct, m.skew_s, m.e_lb, m.dist_cost,
  m.p50_ms, m.p99_ms, m.makespan_ms, m.capacity, m.capacity_vs_key
FROM gold.runs AS r
JOIN gold.distribution_metrics AS m
  ON m.run_id = r.run_id AND m.scope = 'window'
