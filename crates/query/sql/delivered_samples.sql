-- delivered_samples: the samples as perf delivers them to its reports,
-- the unit every count and period of the other views is made of. A
-- sample whose event reads counters (PERF_SAMPLE_READ, a group read
-- above all) is delivered once per read value whose counter moved, as
-- that value's event with its delta as period (`perf report --no-group`
-- shows each member as an event of its own, so); any other sample once,
-- as itself.
--
--   capture, sample_id         the sample (→ samples)
--   event_id                   the event delivered (→ events): the
--                              sample's own, or a read value's
--   period                     the sample's period, or the value's delta
--   time, pid, tid, cpu,
--   cpumode, stack_id,
--   leaf_frame_id              the sample's
--
-- A read value of an id no event has is not delivered (perf counts it
-- as unknown), nor is a delta of 0.
SELECT s.capture AS capture, s.sample_id AS sample_id, s.event_id AS event_id,
  s.period AS period, s.time AS time, s.pid AS pid, s.tid AS tid, s.cpu AS cpu,
  s.cpumode AS cpumode, s.stack_id AS stack_id, s.leaf_frame_id AS leaf_frame_id
FROM samples s
JOIN events e ON e.capture = s.capture AND e.event_id = s.event_id
WHERE instr(concat('|', e.sample_type, '|'), '|READ|') = 0
UNION ALL
SELECT s.capture AS capture, s.sample_id AS sample_id, r.event_id AS event_id,
  r.delta AS period, s.time AS time, s.pid AS pid, s.tid AS tid, s.cpu AS cpu,
  s.cpumode AS cpumode, s.stack_id AS stack_id, s.leaf_frame_id AS leaf_frame_id
FROM read_values r
JOIN samples s ON s.capture = r.capture AND s.sample_id = r.sample_id
WHERE r.event_id IS NOT NULL AND r.delta > 0
