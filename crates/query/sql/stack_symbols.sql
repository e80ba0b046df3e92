-- stack_symbols: each sampled stack's frames as functions, one row per
-- frame, leaf first.
--
--   capture, stack_id  → stacks
--   position           1 for the leaf frame, 2 for its caller, ...
--   symbol, dso        the frame's function (frame_functions), [unknown]
--                      for a frame the frames table lacks
--
-- Rows rather than lists: no aggregate that keeps an order is spelled
-- the same in DataFusion, DuckDB and Spark. A stack as lists:
-- `array_agg(symbol ORDER BY position)` in DataFusion and DuckDB, in
-- Spark `transform(array_sort(collect_list(struct(position, symbol))),
-- x -> x.symbol)`, each grouped by capture and stack_id.
SELECT sf.capture AS capture, sf.stack_id AS stack_id, sf.position AS position,
  COALESCE(ff.symbol, '[unknown]') AS symbol, COALESCE(ff.dso, '[unknown]') AS dso
FROM stack_frames sf
LEFT JOIN frame_functions ff ON ff.capture = sf.capture AND ff.frame_id = sf.frame_id
