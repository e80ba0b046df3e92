-- _function_frames_of_view: _function_frames when frame_functions is the
-- caller's own: its names as they are, no address to name a frame by.
--
--   capture, frame_id  → frame_functions
--   symbol, dso        the frame's function
--   a                  null
SELECT capture, CAST(frame_id AS BIGINT) AS frame_id, symbol, dso,
  CAST(NULL AS BIGINT) AS a
FROM frame_functions
