-- How evenly each window's tuples spread over the workers: the busiest worker
-- against the mean (1.0 = perfectly even), per run and aggregation window.
SELECT r.label, timestamp_millis(l.window_start_ms) AS window_start,
       SUM(l.tuples) AS tuples, MIN(l.tuples) AS min_tuples, MAX(l.tuples) AS max_tuples,
       ROUND(MAX(l.tuples) / AVG(l.tuples), 3) AS max_over_mean
FROM gold.worker_load AS l
JOIN gold.runs AS r ON r.run_id = l.run_id
GROUP BY r.label, l.window_start_ms
ORDER BY r.label, l.window_start_ms;
