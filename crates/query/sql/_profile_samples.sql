-- _profile_samples (template): the delivered samples with their process
-- names, per thread in time order (samples of the same time by stack and
-- event, so that the order is always the same), for the profiles viewers
-- read (profile.rs: pprof, speedscope, the HTML page).
--
--   {named}  _named_delivered's query
--   {only}   a condition on the sample (`name = 'cycles'`), or TRUE
--
--   capture, pid, tid, comm, time,
--   stack_id, name, unwound, weight  the sample's (_named_delivered)
SELECT capture, pid, tid, comm, time, stack_id, name, unwound, weight
FROM ({named}) n
WHERE {only}
ORDER BY capture, tid, time, stack_id, name
