-- stack_functions: each sampled stack's functions, once each (a
-- recursive function once).
--
--   capture, stack_id  → stacks
--   function_id        → functions
--
-- Frames are numbered by function first (a row per frame), then every
-- frame of every stack looked up by number: one join of the many rows,
-- on integers, rather than two, the second on names.
SELECT DISTINCT
  sf.capture AS capture,
  sf.stack_id AS stack_id,
  COALESCE(fi.function_id, 0) AS function_id
FROM stack_frames sf
LEFT JOIN (
  SELECT ff.capture AS capture, ff.frame_id AS frame_id, fn.function_id AS function_id
  FROM frame_functions ff
  JOIN functions fn ON fn.symbol = ff.symbol AND fn.dso = ff.dso
) fi ON fi.capture = sf.capture AND fi.frame_id = sf.frame_id
