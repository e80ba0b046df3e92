-- stack_symbols: each sampled stack as its functions' names.
--
--   capture, stack_id  → stacks
--   symbols            list<utf8>: the function of every frame, leaf first
--   dsos               list<utf8>: their DSOs
SELECT u.capture AS capture, u.stack_id AS stack_id,
  array_agg(COALESCE(ff.symbol, '[unknown]') ORDER BY u.position) AS symbols,
  array_agg(COALESCE(ff.dso, '[unknown]') ORDER BY u.position) AS dsos
FROM (
  SELECT capture, stack_id, unnest(frame_ids) AS frame_id,
    unnest(range(CAST(array_length(frame_ids) AS BIGINT))) AS position
  FROM stacks
  WHERE frame_ids IS NOT NULL
) u
LEFT JOIN frame_functions ff ON ff.capture = u.capture AND ff.frame_id = u.frame_id
GROUP BY u.capture, u.stack_id
