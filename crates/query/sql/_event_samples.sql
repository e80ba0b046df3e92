-- _event_samples (template): the rows of _profile_samples (one event's
-- delivered samples with their process names), in the order they are
-- read rather than sorted, for a reader that orders what it keeps of them
-- itself (crate::stack_counts numbers threads by their first sample in
-- _profile_samples' order), with each one's leaf frame (for the
-- per-function sums read from the same samples: function_sums).
--
--   {named}  _named_delivered's query
--   {only}   a condition on the sample (`name = 'cycles'`), or TRUE
--
--   capture, sample_id, pid, tid,
--   comm, time, stack_id,
--   leaf_frame_id,
--   event_id, weight            the sample's (_named_delivered)
SELECT capture, sample_id, pid, tid, comm, time, stack_id, leaf_frame_id, event_id, weight
FROM ({named}) n
WHERE {only}
