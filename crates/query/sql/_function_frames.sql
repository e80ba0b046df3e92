-- _function_frames: the frames perfq names functions from (stack_tables.rs)
-- when frame_functions is the standard view: frames at inline depth 0, as
-- that view reads them, with the address an unresolved frame is named by.
--
--   capture, frame_id  → frames
--   symbol, dso        the frame's
--   a                  its DSO offset, else its address
SELECT capture, CAST(frame_id AS BIGINT) AS frame_id, symbol, dso,
  COALESCE(dso_offset, address) AS a
FROM frames WHERE inline_depth = 0
