-- _sampled_events: the events with delivered samples (delivered_samples),
-- the first delivered first, a group's members in group order where they
-- tie: the event the flame graph folds and diff compares unless told
-- another (the collapse tools, too, fold the first event).
--
--   name    the event (events.name)
--   first   the time of its first delivered sample
--   member  its place in its group
SELECT e.name AS name, MIN(d.time) AS first, MIN(e.member) AS member
FROM delivered_samples d
JOIN events e ON e.capture = d.capture AND e.event_id = d.event_id
GROUP BY e.name
ORDER BY first, member, name
