-- _unnested_stack_frames: stack_frames as DataFusion writes it,
-- stacks.frame_ids unnested: the rows of the view's walk up the stack
-- tree (a test holds them equal). No spelling of unnest is common to
-- DataFusion, DuckDB and Spark, so the view walks; DataFusion runs a
-- recursive query a level at a time, building a hash table of every stack
-- at each level, so perfq defines stack_frames as this query instead
-- (docs/schema.md has the times).
--
--   capture, stack_id  → stacks (those samples have)
--   position           1 for the leaf frame, 2 for its caller, ...
--   frame_id           → frames.frame_id
SELECT capture, stack_id,
  unnest(range(1, CAST(cardinality(frame_ids) AS BIGINT) + 1)) AS position,
  unnest(frame_ids) AS frame_id
FROM stacks WHERE frame_ids IS NOT NULL
