-- _flamegraph_delivered: the samples as perf script delivers them
-- (delivered_samples), each with its event's name and place in its group,
-- its period as the weight a folded stack adds up, and whether its event's
-- samples carry a user stack to unwind (perf then expands each unwound
-- user frame into its inlining levels).
--
--   capture, sample_id, time, pid, tid,
--   stack_id, leaf_frame_id       the sample's
--   event_id, name, member        its event (→ events)
--   weight                        its period
--   unwound                       its event samples the user stack
SELECT d.capture AS capture, d.sample_id AS sample_id, d.time AS time, d.pid AS pid,
  d.tid AS tid,
  d.stack_id AS stack_id, d.leaf_frame_id AS leaf_frame_id,
  d.event_id AS event_id, e.name AS name, e.member AS member,
  d.period AS weight,
  instr(concat('|', e.sample_type, '|'), '|STACK_USER|') > 0 AS unwound
FROM delivered_samples d
JOIN events e ON e.capture = d.capture AND e.event_id = d.event_id
