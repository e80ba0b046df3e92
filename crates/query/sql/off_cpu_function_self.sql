-- off_cpu_function_self: per function, the off-CPU intervals whose
-- stack ends in it (its leaf frame: where the thread left the CPU), by
-- state.
--
--   capture, state  the capture, and why the threads waited
--                   (off_cpu.state)
--   symbol, dso     the function ([unknown] without a stack)
--   intervals       the intervals (off_cpu_stacks)
--   self_ns         their length
SELECT o.capture AS capture, o.state AS state,
  COALESCE(ff.symbol, '[unknown]') AS symbol, COALESCE(ff.dso, '[unknown]') AS dso,
  COUNT(*) AS intervals, SUM(o.duration_ns) AS self_ns
FROM off_cpu_stacks o
LEFT JOIN frame_functions ff ON ff.capture = o.capture AND ff.frame_id = o.leaf_frame_id
GROUP BY o.capture, o.state, COALESCE(ff.symbol, '[unknown]'), COALESCE(ff.dso, '[unknown]')
