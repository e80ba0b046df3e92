-- _flamegraph_threads: the COMM, exec, FORK and EXIT records of every
-- thread, from which flamegraph.rs works out each thread's name over time.
--
--   capture, time, kind, tid, ptid, comm  → threads
SELECT capture, time, kind, tid, ptid, comm FROM threads
