-- function_self: per function, the delivered samples whose own address
-- is in it (perf report's Self).
--
--   capture, event_id  the capture and event (→ events)
--   symbol, dso        the function
--   samples            delivered samples (delivered_samples)
--   period             the sum of their periods
SELECT capture, event_id, symbol, dso, COUNT(*) AS samples, SUM(period) AS period
FROM sample_symbols
GROUP BY capture, event_id, symbol, dso
