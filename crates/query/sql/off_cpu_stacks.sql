-- off_cpu_stacks: every off-CPU interval (off_cpu) with the stack and
-- leaf frame of the sample that gives it its stack.
--
--   off_cpu.*      the interval, as off_cpu gives it
--   stack_id       its stack (→ stacks): the switch-out's callchain, or
--                  the thread's last sample's (off_cpu.stack_from)
--   leaf_frame_id  the frame of that sample's own address
--   delay_ns       how long it waited for a CPU once it could run: all of
--                  it when runnable, else from its wakeup to its return
--                  (0 when no wakeup was recorded)
SELECT o.*, s.stack_id AS stack_id, s.leaf_frame_id AS leaf_frame_id,
  CASE
    WHEN o.state = 'runnable' THEN o.duration_ns
    WHEN o.wake_time <= o.end_time THEN o.end_time - o.wake_time
    ELSE 0
  END AS delay_ns
FROM off_cpu o
LEFT JOIN samples s ON s.capture = o.capture AND s.sample_id = o.sample_id
