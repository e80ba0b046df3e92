-- off_cpu_thread: per thread, its time off CPU by why, and its time on
-- CPU between the switches recorded (perf sched timehist's columns).
--
--   capture, pid, tid  the thread
--   switches           its intervals (off_cpu rows)
--   off_cpu_ns         their length
--   runnable_ns        of which runnable: preempted, waiting for a CPU
--   sleeping_ns        of which sleeping (S), or waiting of a kind a
--                      switch record does not say, or another state
--   blocked_ns         of which uninterruptible (D): mostly I/O
--   delay_ns           scheduling delay: from being able to run (a
--                      wakeup, or being preempted) to running
--   run_ns             its time on CPU from a switch-in (where that was
--                      not recorded, the CPU's last switch) to the next
--                      switch-out (off_cpu.run_ns)
--   uncertain          intervals crossing lost records
SELECT capture, pid, tid,
  COUNT(*) AS switches,
  SUM(duration_ns) AS off_cpu_ns,
  SUM(CASE WHEN state = 'runnable' THEN duration_ns ELSE 0 END) AS runnable_ns,
  SUM(CASE WHEN state NOT IN ('runnable', 'blocked') THEN duration_ns ELSE 0 END) AS sleeping_ns,
  SUM(CASE WHEN state = 'blocked' THEN duration_ns ELSE 0 END) AS blocked_ns,
  SUM(delay_ns) AS delay_ns,
  SUM(COALESCE(run_ns, 0)) AS run_ns,
  SUM(CASE WHEN uncertain THEN 1 ELSE 0 END) AS uncertain
FROM off_cpu_stacks
GROUP BY capture, pid, tid
