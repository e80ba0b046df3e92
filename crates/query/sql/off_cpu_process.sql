-- off_cpu_process: per process, its threads' off_cpu_thread rows summed.
--
--   capture, pid                 the process
--   threads                      its threads with an interval
--   switches, off_cpu_ns,
--   runnable_ns, sleeping_ns,
--   blocked_ns, delay_ns,
--   run_ns, uncertain            off_cpu_thread's, summed
SELECT capture, pid, COUNT(*) AS threads, SUM(switches) AS switches,
  SUM(off_cpu_ns) AS off_cpu_ns, SUM(runnable_ns) AS runnable_ns,
  SUM(sleeping_ns) AS sleeping_ns, SUM(blocked_ns) AS blocked_ns,
  SUM(delay_ns) AS delay_ns, SUM(run_ns) AS run_ns, SUM(uncertain) AS uncertain
FROM off_cpu_thread
GROUP BY capture, pid
