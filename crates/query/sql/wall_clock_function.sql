-- wall_clock_function: per function, where threads spent their time,
-- on CPU and off it, as hotspot's wall-clock profile adds them: the
-- periods of the clock events' samples (cpu-clock and task-clock, whose
-- periods are ns) and the off-CPU intervals (off_cpu_function, every
-- state). A capture with no clock event, or no off-CPU intervals, has 0
-- on that side.
--
--   capture           the capture
--   symbol, dso       the function
--   on_cpu_self_ns    the clock samples' time in it (function_self)
--   on_cpu_total_ns   the clock samples' time with it on the stack
--                     (function_total)
--   off_cpu_self_ns   the waits that left the CPU in it
--   off_cpu_total_ns  the waits with it on the stack
--   self_ns           on_cpu_self_ns + off_cpu_self_ns
--   total_ns          on_cpu_total_ns + off_cpu_total_ns
WITH clock AS (
  SELECT e.capture AS capture, e.event_id AS event_id
  FROM events e
  WHERE e.type = 1 AND e.config IN (0, 1)
), on_self AS (
  SELECT f.capture AS capture, f.symbol AS symbol, f.dso AS dso, SUM(f.period) AS ns
  FROM function_self f
  JOIN clock c ON c.capture = f.capture AND c.event_id = f.event_id
  GROUP BY f.capture, f.symbol, f.dso
), on_total AS (
  SELECT f.capture AS capture, f.symbol AS symbol, f.dso AS dso, SUM(f.period) AS ns
  FROM function_total f
  JOIN clock c ON c.capture = f.capture AND c.event_id = f.event_id
  GROUP BY f.capture, f.symbol, f.dso
), on_cpu AS (
  SELECT COALESCE(t.capture, s.capture) AS capture, COALESCE(t.symbol, s.symbol) AS symbol,
    COALESCE(t.dso, s.dso) AS dso, COALESCE(s.ns, 0) AS self_ns, COALESCE(t.ns, 0) AS total_ns
  FROM on_total t
  FULL OUTER JOIN on_self s ON s.capture = t.capture AND s.symbol = t.symbol AND s.dso = t.dso
), off_cpu AS (
  SELECT capture, symbol, dso, SUM(self_ns) AS self_ns, SUM(total_ns) AS total_ns
  FROM off_cpu_function
  GROUP BY capture, symbol, dso
)
SELECT COALESCE(n.capture, f.capture) AS capture, COALESCE(n.symbol, f.symbol) AS symbol,
  COALESCE(n.dso, f.dso) AS dso,
  COALESCE(n.self_ns, 0) AS on_cpu_self_ns, COALESCE(n.total_ns, 0) AS on_cpu_total_ns,
  COALESCE(f.self_ns, 0) AS off_cpu_self_ns, COALESCE(f.total_ns, 0) AS off_cpu_total_ns,
  COALESCE(n.self_ns, 0) + COALESCE(f.self_ns, 0) AS self_ns,
  COALESCE(n.total_ns, 0) + COALESCE(f.total_ns, 0) AS total_ns
FROM on_cpu n
FULL OUTER JOIN off_cpu f ON f.capture = n.capture AND f.symbol = n.symbol AND f.dso = n.dso
