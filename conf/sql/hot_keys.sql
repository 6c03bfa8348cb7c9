-- The hottest keys of each run: their total count, and how many workers their pool
-- grew to (gold.hot_keys keeps one row per routing snapshot in which a key was hot).
WITH totals AS (
  SELECT run_id, key, SUM(count) AS total_count
  FROM gold.key_counts
  GROUP BY run_id, key
),
pools AS (
  SELECT run_id, key, MAX(pool_size) AS max_pool_size, MAX(estimated_share) AS max_share,
         COUNT(*) AS hot_snapshots, MAX_BY(reason, as_of_ms) AS last_reason
  FROM gold.hot_keys
  GROUP BY run_id, key
)
SELECT r.label, p.key, t.total_count, ROUND(t.total_count / r.tuples, 4) AS share,
       p.max_pool_size, p.hot_snapshots, p.last_reason
FROM pools AS p
JOIN totals AS t ON t.run_id = p.run_id AND t.key = p.key
JOIN gold.run_comparison AS r ON r.run_id = p.run_id
ORDER BY r.label, t.total_count DESC, p.key;
