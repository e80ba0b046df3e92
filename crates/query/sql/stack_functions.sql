-- stack_functions: each sampled stack's functions, once each (a
-- recursive function once).
--
--   capture, stack_id  → stacks
--   function_id        → functions
-- Stacks are unnested whole: only the stacks samples have list their
-- frames (stacks.frame_ids).
SELECT DISTINCT
  u.capture AS capture,
  u.stack_id AS stack_id,
  COALESCE(fn.function_id, 0) AS function_id
FROM (
  SELECT capture, stack_id, unnest(frame_ids) AS frame_id
  FROM stacks
  WHERE frame_ids IS NOT NULL
) u
LEFT JOIN frame_functions ff ON ff.capture = u.capture AND ff.frame_id = u.frame_id
LEFT JOIN functions fn ON fn.symbol = ff.symbol AND fn.dso = ff.dso
