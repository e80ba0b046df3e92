-- _event_samples (template): delivered samples of some events
-- (delivered_samples), in the order they are read rather than sorted, for
-- a reader that keeps one event's samples (its ids differ between
-- captures: the reader keeps each capture's own, as _flamegraph_delivered's
-- join with events by name keeps them), names each sample's thread by its
-- comm when it was delivered (the comm intervals _named_delivered joins,
-- looked up in memory: named_samples.rs) and orders what it keeps itself
-- (crate::stack_counts numbers threads by their first sample in
-- _profile_samples' order), with each one's leaf frame (for the
-- per-function sums read from the same samples: function_sums).
--
--   {only}       a condition on the sample (`event_id IN (1, 4)`)
--
--   capture, sample_id, pid, tid,
--   time, stack_id,
--   leaf_frame_id, event_id     the sample's (delivered_samples)
--   weight                      its period
SELECT capture, sample_id, pid, tid, time, stack_id, leaf_frame_id, event_id,
  period AS weight
FROM delivered_samples
WHERE {only}
