-- off_cpu_function: per function, the off-CPU time of the intervals whose
-- stack ends in it (self) and whose stack holds it (total), by state: the
-- off-CPU counterpart of function_self and function_total, in time
-- rather than samples. Sum over state for a function's whole.
--
--   capture, state  the capture, and why the threads waited
--                   (off_cpu.state)
--   symbol, dso     the function
--   self_ns         off_cpu_function_self's (0 where none ends in it)
--   total_ns        off_cpu_function_total's (0 where no stack holds it)
--   intervals       the intervals whose stack holds it, or ends in it
SELECT COALESCE(t.capture, s.capture) AS capture, COALESCE(t.state, s.state) AS state,
  COALESCE(t.symbol, s.symbol) AS symbol, COALESCE(t.dso, s.dso) AS dso,
  COALESCE(s.self_ns, 0) AS self_ns, COALESCE(t.total_ns, 0) AS total_ns,
  COALESCE(t.intervals, s.intervals) AS intervals
FROM off_cpu_function_total t
FULL OUTER JOIN off_cpu_function_self s
  ON s.capture = t.capture AND s.state = t.state AND s.symbol = t.symbol AND s.dso = t.dso
