-- _interval_samples (template): one event's delivered samples, each with
-- the function of its own address (sample_symbols) and the interval of
-- its capture's time it falls in, counted from the capture's first
-- sample (crate::function_sums: the HTML page's time line).
--
--   {event}        the event's name
--   {interval_ns}  the intervals' length (ns)
--
--   capture, stack_id, period  the sample's (delivered_samples)
--   symbol, dso                the function of its own address
--   bucket                     (time - capture.time_first) / interval_ns,
--                              rounded down; 0 without a time
SELECT s.capture AS capture, s.stack_id AS stack_id, s.period AS period,
  s.symbol AS symbol, s.dso AS dso,
  CASE WHEN s.time > COALESCE(c.time_first, 0)
    THEN CAST(s.time - COALESCE(c.time_first, 0) AS BIGINT) / {interval_ns}
    ELSE CAST(0 AS BIGINT) END AS bucket
FROM sample_symbols s
JOIN events e ON e.capture = s.capture AND e.event_id = s.event_id
JOIN capture c ON c.capture = s.capture
WHERE e.name = {event}
