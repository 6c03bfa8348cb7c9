-- Groupings side by side: each run's cumulative balance and merge cost, best balance first.
SELECT topic, label, grouping, workers, tuples, imbalance, stddev_pct, dist_cost, p99_ms, throughput
FROM gold.run_comparison
ORDER BY topic, imbalance, dist_cost, label;
