-- _diff_events: the events a session's delivered samples are of, the
-- first sampled first (crate::diff).
--
--   name   the event (events.name)
--   first  the time of its first delivered sample
SELECT e.name AS name, MIN(d.time) AS first
FROM delivered_samples d
JOIN events e ON e.capture = d.capture AND e.event_id = d.event_id
GROUP BY e.name
ORDER BY first, name
