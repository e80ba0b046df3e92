-- off_cpu_function_total: per function, the off-CPU intervals whose
-- stack holds it, each once however often the function recurses (the
-- off-CPU time of the function and everything it called), by state.
--
--   capture, state  the capture, and why the threads waited
--                   (off_cpu.state)
--   symbol, dso     the function
--   intervals       the intervals (off_cpu_stacks)
--   total_ns        their length
--
-- This query is the template _inclusive_sums.sql filled for the
-- intervals per capture and state (inclusive.rs; a test holds it so).
SELECT t.capture AS capture, t.state AS state, fn.symbol AS symbol, fn.dso AS dso,
  t.intervals AS intervals, t.total_ns AS total_ns
FROM (
  SELECT g.capture AS capture, g.state AS state, fs.function_id AS function_id,
    SUM(g.intervals) AS intervals, SUM(g.total_ns) AS total_ns
  FROM (
    SELECT s.capture AS capture, s.state AS state, ss.set_id AS set_id,
      COUNT(*) AS intervals, SUM(s.duration_ns) AS total_ns
    FROM stack_sets ss
    JOIN off_cpu_stacks s ON ss.capture = s.capture AND ss.stack_id = s.stack_id
    GROUP BY s.capture, s.state, ss.set_id
  ) g
  JOIN set_functions fs ON fs.set_id = g.set_id
  GROUP BY g.capture, g.state, fs.function_id
) t
JOIN functions fn ON fn.function_id = t.function_id
