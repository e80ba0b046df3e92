-- _flamegraph_off_cpu (template): the off-CPU intervals per capture,
-- process name and stack, with the stack's frames: the off-CPU flame
-- graph's rows, in the shape of _flamegraph_stacks's.
--
--   {comms}  the table of comm intervals (capture, tid, start_time,
--            end_time, comm) flamegraph.rs keeps
--
--   capture, comm  the capture, and the thread's process name when it left
--   unwound        false: the stacks are the recorded callchains
--   samples        intervals
--   weight         their length (ns)
--   frame_ids      the stack's frames, leaf first (null without a stack)
WITH grouped AS (
  SELECT o.capture AS capture,
    COALESCE(c.comm, concat(':', CAST(o.tid AS VARCHAR))) AS comm,
    o.stack_id AS stack_id, COUNT(*) AS samples, SUM(o.duration_ns) AS weight
  FROM off_cpu_stacks o
  LEFT JOIN {comms} c ON c.capture = o.capture AND c.tid = o.tid
    AND o.start_time >= c.start_time AND o.start_time < c.end_time
  WHERE o.duration_ns > 0
  GROUP BY o.capture, COALESCE(c.comm, concat(':', CAST(o.tid AS VARCHAR))), o.stack_id
)
SELECT g.capture AS capture, g.comm AS comm, false AS unwound,
  g.samples AS samples, g.weight AS weight, st.frame_ids AS frame_ids
FROM grouped g
LEFT JOIN stacks st ON st.capture = g.capture AND st.stack_id = g.stack_id
