-- _flamegraph_events (template): the events with delivered samples, the
-- first delivered first (the collapse tools fold the first event unless
-- told another), a group's members in group order where they tie.
--
--   {delivered}  _flamegraph_delivered's query
--
--   name    the event (events.name)
--   first   the time of its first sample
--   member  its place in its group
SELECT name, MIN(time) AS first, MIN(member) AS member
FROM ({delivered}) d
GROUP BY name
ORDER BY first, member, name
