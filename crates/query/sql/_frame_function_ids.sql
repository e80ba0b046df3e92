-- _frame_function_ids: each frame's function, by id, when frame_functions
-- or functions is the caller's own (stack_tables.rs): the join
-- stack_functions makes of them, as 64-bit integers.
--
--   capture, frame_id  → frame_functions
--   function_id        → functions
SELECT ff.capture AS capture, CAST(ff.frame_id AS BIGINT) AS frame_id,
  CAST(fn.function_id AS BIGINT) AS function_id
FROM frame_functions ff
JOIN functions fn ON fn.symbol = ff.symbol AND fn.dso = ff.dso
