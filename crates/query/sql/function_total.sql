-- function_total: per function, the delivered samples whose stack holds
-- it, each once however often the function recurses (perf report
-- --children's Children).
--
--   capture, event_id  the capture and event (→ events)
--   symbol, dso        the function
--   samples            delivered samples (delivered_samples)
--   period             the sum of their periods
--
-- Sums are taken per set of functions, then per function id (a
-- function's set rows are many; ids group faster than names), then
-- named. This query is the template _inclusive_sums.sql filled for the
-- delivered samples per capture and event (inclusive.rs; a test holds it
-- so): a change belongs in the template, which topdown's total rows fill
-- too.
SELECT t.capture AS capture, t.event_id AS event_id, fn.symbol AS symbol, fn.dso AS dso,
  t.samples AS samples, t.period AS period
FROM (
  SELECT g.capture AS capture, g.event_id AS event_id, fs.function_id AS function_id,
    SUM(g.samples) AS samples, SUM(g.period) AS period
  FROM (
    SELECT s.capture AS capture, s.event_id AS event_id, ss.set_id AS set_id,
      COUNT(*) AS samples, SUM(s.period) AS period
    FROM stack_sets ss
    JOIN delivered_samples s ON ss.capture = s.capture AND ss.stack_id = s.stack_id
    GROUP BY s.capture, s.event_id, ss.set_id
  ) g
  JOIN set_functions fs ON fs.set_id = g.set_id
  GROUP BY g.capture, g.event_id, fs.function_id
) t
JOIN functions fn ON fn.function_id = t.function_id
