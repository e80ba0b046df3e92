-- _interval_leaves (template): one event's delivered samples, each with
-- its leaf frame and the interval of its capture's time it falls in, as
-- _interval_samples counts it, for the per-function sums perfq computes
-- from the stack tables it keeps (crate::function_sums). A sample whose
-- capture has no `capture` row has no interval: it counts in its
-- functions' totals over the whole time (function_total counts it), not
-- in an interval (_interval_samples' join leaves it out).
--
--   {event}        the event's name
--   {interval_ns}  the intervals' length (ns)
--
--   capture, stack_id,
--   leaf_frame_id, period   the sample's (delivered_samples)
--   bucket                  (time - capture.time_first) / interval_ns,
--                           rounded down; 0 without a time; null
--                           without a capture row
SELECT d.capture AS capture, d.stack_id AS stack_id, d.leaf_frame_id AS leaf_frame_id,
  d.period AS period,
  CASE WHEN c.capture IS NULL THEN NULL
    WHEN d.time > COALESCE(c.time_first, 0)
    THEN CAST(d.time - COALESCE(c.time_first, 0) AS BIGINT) / {interval_ns}
    ELSE CAST(0 AS BIGINT) END AS bucket
FROM delivered_samples d
JOIN events e ON e.capture = d.capture AND e.event_id = d.event_id
LEFT JOIN capture c ON c.capture = d.capture
WHERE e.name = {event}
