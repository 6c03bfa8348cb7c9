-- Messages that could not be parsed, by run and reason, with one example payload.
SELECT run_id, error AS reason, COUNT(*) AS messages,
       LEFT(CAST(MIN_BY(payload, offset) AS STRING), 80) AS example
FROM silver.quarantine
GROUP BY run_id, error
ORDER BY run_id, messages DESC, reason;
