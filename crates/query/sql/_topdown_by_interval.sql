-- _topdown_by_interval (template): topdown's sums per time interval of
-- each capture, from the capture's first sample.
--
--   {interval_ns}  the interval's length, in nanoseconds
--   {interval_s}   the same in seconds
--   {capture_key}  `g.capture AS capture, ` with many captures (a key),
--                  else nothing
--   {sums}         the sums over t's rows
--   {pass}         those sums passed through (`g.n AS n, ...`)
SELECT {capture_key}CAST(g.bucket AS DOUBLE) * {interval_s} AS start_s, {pass}
FROM (
  SELECT t.capture AS capture,
    CAST(FLOOR(CAST(t.time - c.time_first AS DOUBLE) / {interval_ns}) AS BIGINT) AS bucket,
    {sums}
  FROM t
  JOIN capture c ON c.capture = t.capture
  GROUP BY t.capture, CAST(FLOOR(CAST(t.time - c.time_first AS DOUBLE) / {interval_ns}) AS BIGINT)
) g
