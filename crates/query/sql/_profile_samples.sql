-- _profile_samples (template): the delivered samples with their process
-- names, per thread in time order (samples of the same time in the
-- capture's order, a group read's members in the group's: the order is
-- always the same), for the profiles viewers read (profile.rs: pprof,
-- speedscope, the HTML page).
--
--   {named}  _named_delivered's query
--   {only}   a condition on the sample (`name = 'cycles'`), or TRUE
--
--   capture, sample_id, pid, tid,
--   comm, time,
--   stack_id, event_id, name,
--   unwound, weight                  the sample's (_named_delivered)
SELECT capture, sample_id, pid, tid, comm, time, stack_id, event_id, name, unwound, weight
FROM ({named}) n
WHERE {only}
ORDER BY capture, tid, time, sample_id, event_id
