-- stack_frames: each sampled stack's frames, one row each, leaf first.
--
--   capture, stack_id  → stacks (those samples have)
--   position           1 for the leaf frame, 2 for its caller, ...
--   frame_id           → frames.frame_id
--
-- stacks.frame_ids as rows, without unnesting it: DataFusion spells that
-- `unnest(frame_ids)`, Spark `explode(frame_ids)` or `LATERAL unnest(..)`,
-- and no spelling works in both (DuckDB takes either), nor does any way
-- to take an array's n-th element (Spark's `a[n]` counts from 0). A
-- stack's callers are a stack of their own (`parent_stack_id`), so
-- walking up from each sampled stack gives its frames in order, in SQL
-- all three read. perfq's stack tables read the same rows unnested
-- (`views::keep_stack_tables`): DataFusion walks one level at a time,
-- hashing every stack at each, slow for deep stacks.
WITH RECURSIVE walk (capture, stack_id, position, frame_id, caller) AS (
  SELECT capture, stack_id, 1, frame_id, parent_stack_id
  FROM stacks
  WHERE frame_ids IS NOT NULL
  UNION ALL
  SELECT w.capture, w.stack_id, w.position + 1, s.frame_id, s.parent_stack_id
  FROM walk w
  JOIN stacks s ON s.capture = w.capture AND s.stack_id = w.caller
)
SELECT capture, stack_id, position, frame_id FROM walk
