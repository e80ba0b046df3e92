-- function_total: per function, the samples whose stack holds it, each
-- sample once however often the function recurses (perf report
-- --children's Children).
--
--   capture, event_id  the capture and event (→ events)
--   symbol, dso        the function
--   samples            samples
--   period             the sum of their periods
SELECT g.capture AS capture, g.event_id AS event_id, fs.symbol AS symbol, fs.dso AS dso,
  SUM(g.samples) AS samples, SUM(g.period) AS period
FROM (
  SELECT s.capture AS capture, s.event_id AS event_id, ss.set_id AS set_id,
    COUNT(*) AS samples, SUM(s.period) AS period
  FROM samples s
  JOIN stack_sets ss ON ss.capture = s.capture AND ss.stack_id = s.stack_id
  GROUP BY s.capture, s.event_id, ss.set_id
) g
JOIN set_functions fs ON fs.set_id = g.set_id
GROUP BY g.capture, g.event_id, fs.symbol, fs.dso
