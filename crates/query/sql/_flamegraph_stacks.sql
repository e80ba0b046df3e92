-- _flamegraph_stacks (template): the delivered samples of one event per
-- capture, process name and stack, with the stack's frames.
--
--   {named}  _named_delivered's query (the samples with their process
--            names)
--   {event}  the event's name
--
--   capture, comm  the capture and process name
--   unwound        the samples carry a user stack
--   samples        delivered samples
--   weight         the sum of their periods
--   frame_ids      the stack's frames, leaf first (null without a stack)
WITH grouped AS (
  SELECT capture, comm, stack_id, unwound, COUNT(*) AS samples, SUM(weight) AS weight
  FROM ({named}) n
  WHERE name = {event}
  GROUP BY capture, comm, stack_id, unwound
)
SELECT g.capture AS capture, g.comm AS comm, g.unwound AS unwound,
  g.samples AS samples, g.weight AS weight, st.frame_ids AS frame_ids
FROM grouped g
LEFT JOIN stacks st ON st.capture = g.capture AND st.stack_id = g.stack_id
