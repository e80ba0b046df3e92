-- _topdown_samples (template): one capture's rows of topdown_samples: its
-- samples of the events that carry the formula set's roles, each role's
-- value a DOUBLE column (0 where the sample does not carry it).
--
--   {roles}    the role columns, `r_<role>` each
--   {capture}  the capture's id
--   {events}   the ids of the events whose samples carry the roles
--   {only}     further conditions on the samples (`AND pid IN (...)`), or
--              nothing
SELECT capture, sample_id, time, pid, tid, cpu, stack_id, leaf_frame_id, {roles}
FROM samples
WHERE capture = {capture} AND event_id IN ({events}){only}
