-- _off_cpu_by_interval (template): each thread's time off CPU, per
-- interval of its capture's time and state, and on CPU before each
-- switch-out (state 'running': off_cpu.run_ns before its start_time);
-- the part of each that falls in the interval, intervals counted from
-- the capture's first sample as _interval_samples counts them
-- (crate::off_cpu: the HTML page's time line of one thread).
--
--   {interval_ns}  the intervals' length (ns)
--
--   pid, tid       the thread (off_cpu's)
--   bucket         the interval of time
--   state          why it waited (off_cpu.state), or 'running'
--   ns             how long of the interval it spent so
--
-- Rows without times (offcpu_time sums) and time before the capture's
-- first sample are left out.
WITH spans AS (
  SELECT capture, pid, tid, state, start_time AS t0, end_time AS t1
  FROM off_cpu
  WHERE start_time IS NOT NULL AND end_time > start_time
  UNION ALL
  SELECT capture, pid, tid, 'running' AS state, start_time - run_ns AS t0, start_time AS t1
  FROM off_cpu
  WHERE start_time IS NOT NULL AND run_ns > 0 AND run_ns <= start_time
),
timed AS (
  SELECT sp.pid AS pid, sp.tid AS tid, sp.state AS state,
    GREATEST(CAST(sp.t0 AS BIGINT) - CAST(c.time_first AS BIGINT), CAST(0 AS BIGINT)) AS s,
    CAST(sp.t1 AS BIGINT) - CAST(c.time_first AS BIGINT) AS e
  FROM spans sp
  JOIN capture c ON c.capture = sp.capture
  WHERE c.time_first IS NOT NULL
),
spread AS (
  SELECT pid, tid, state, s, e,
    unnest(range(s / {interval_ns}, e / {interval_ns} + 1)) AS bucket
  FROM timed
  WHERE e > s
),
parts AS (
  SELECT pid, tid, bucket, state,
    LEAST(e, (bucket + 1) * {interval_ns}) - GREATEST(s, bucket * {interval_ns}) AS ns
  FROM spread
)
SELECT pid, tid, bucket, state, SUM(ns) AS ns
FROM parts
WHERE ns > 0
GROUP BY pid, tid, bucket, state
ORDER BY pid, tid, bucket, state
