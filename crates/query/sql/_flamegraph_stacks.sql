-- _flamegraph_stacks (template): the delivered samples of one event per
-- capture, process name and stack, with the stack's frames. A sample's
-- process name is its thread's comm when it was delivered (the interval
-- of {comms} its time falls in), else perf's `swapper` for thread 0 and
-- `:<tid>` for a thread perf never named.
--
--   {delivered}  _flamegraph_delivered's query
--   {comms}      the table of comm intervals (capture, tid, start_time,
--                end_time, comm) flamegraph.rs keeps
--   {event}      the event's name
--
--   capture, comm  the capture and process name
--   unwound        the samples carry a user stack
--   samples        delivered samples
--   weight         the sum of their periods
--   frame_ids      the stack's frames, leaf first (null without a stack)
WITH named AS (
  SELECT d.capture AS capture, d.stack_id AS stack_id, d.unwound AS unwound,
    d.weight AS weight,
    COALESCE(c.comm, CASE WHEN d.tid = 0 THEN 'swapper'
      ELSE concat(':', CAST(d.tid AS VARCHAR)) END) AS comm
  FROM ({delivered}) d
  LEFT JOIN {comms} c ON c.capture = d.capture AND c.tid = d.tid
    AND d.time >= c.start_time AND d.time < c.end_time
  WHERE d.name = {event}
), grouped AS (
  SELECT capture, comm, stack_id, unwound, COUNT(*) AS samples, SUM(weight) AS weight
  FROM named
  GROUP BY capture, comm, stack_id, unwound
)
SELECT g.capture AS capture, g.comm AS comm, g.unwound AS unwound,
  g.samples AS samples, g.weight AS weight, st.frame_ids AS frame_ids
FROM grouped g
LEFT JOIN stacks st ON st.capture = g.capture AND st.stack_id = g.stack_id
