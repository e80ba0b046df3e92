-- _event_samples (template): one event's delivered samples
-- (_flamegraph_delivered), in the order they are read rather than sorted,
-- for a reader that names each sample's thread by its comm when it was
-- delivered (the comm intervals _named_delivered joins, looked up in
-- memory: named_samples.rs) and orders what it keeps of them itself
-- (crate::stack_counts numbers threads by their first sample in
-- _profile_samples' order), with each one's leaf frame (for the
-- per-function sums read from the same samples: function_sums).
--
--   {delivered}  _flamegraph_delivered's query
--   {only}       a condition on the sample (`name = 'cycles'`), or TRUE
--
--   capture, sample_id, pid, tid,
--   time, stack_id,
--   leaf_frame_id,
--   event_id, weight            the sample's (_flamegraph_delivered)
SELECT capture, sample_id, pid, tid, time, stack_id, leaf_frame_id, event_id, weight
FROM ({delivered}) d
WHERE {only}
