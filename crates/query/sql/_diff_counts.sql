-- _diff_counts (template): one event's delivered samples per key, each
-- counted for the function of its own address (sample_symbols), as perf
-- diff compares them.
--
--   {keys}   the key columns of sample_symbols: `symbol, dso` or `dso`
--   {event}  the event's name
--
--   the keys
--   samples  delivered samples
--   period   the sum of their periods
SELECT {keys}, COUNT(*) AS samples, SUM(s.period) AS period
FROM sample_symbols s
JOIN events e ON e.capture = s.capture AND e.event_id = s.event_id
WHERE e.name = {event}
GROUP BY {keys}
