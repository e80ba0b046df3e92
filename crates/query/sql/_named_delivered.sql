-- _named_delivered (template): the delivered samples, each named by its
-- process name when it was delivered: its thread's comm then (the
-- interval of {comms} its time falls in), else perf's `swapper` for
-- thread 0 and `:<tid>` for a thread perf never named. The flame graph's
-- stacks and the exported profiles (profile.rs) read the samples so.
--
--   {delivered}  _flamegraph_delivered's query
--   {comms}      the table of comm intervals (capture, tid, start_time,
--                end_time, comm) flamegraph.rs keeps
--
--   capture, sample_id, time, pid, tid,
--   stack_id, leaf_frame_id,
--   event_id, name, unwound,
--   weight                    the sample's (_flamegraph_delivered)
--   comm                      its process name
SELECT d.capture AS capture, d.sample_id AS sample_id, d.time AS time, d.pid AS pid,
  d.tid AS tid,
  d.stack_id AS stack_id, d.leaf_frame_id AS leaf_frame_id, d.event_id AS event_id, d.name AS name,
  d.unwound AS unwound, d.weight AS weight,
  COALESCE(c.comm, CASE WHEN d.tid = 0 THEN 'swapper'
    ELSE concat(':', CAST(d.tid AS VARCHAR)) END) AS comm
FROM ({delivered}) d
LEFT JOIN {comms} c ON c.capture = d.capture AND c.tid = d.tid
  AND d.time >= c.start_time AND d.time < c.end_time
