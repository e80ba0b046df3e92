-- _flamegraph_frames: every frame's rows (one per inlining level), with
-- the function the standard views count it for, for the names folded
-- stacks give frames (flamegraph.rs) and the locations of exported
-- profiles (profile.rs).
--
--   capture, frame_id, inline_depth  → frames
--   function, raw_function, file,
--   line, symbol, raw_symbol, dso,
--   dso_path, build_id, address,
--   dso_offset, kind                 the frame row's
--   key_symbol, key_dso              its function (frame_functions)
SELECT f.capture AS capture, f.frame_id AS frame_id, f.inline_depth AS inline_depth,
  f.function AS function, f.raw_function AS raw_function, f.file AS file, f.line AS line,
  f.symbol AS symbol, f.raw_symbol AS raw_symbol, f.dso AS dso, f.dso_path AS dso_path,
  f.build_id AS build_id, f.address AS address, f.dso_offset AS dso_offset,
  f.kind AS kind, ff.symbol AS key_symbol, ff.dso AS key_dso
FROM frames f
JOIN frame_functions ff ON ff.capture = f.capture AND ff.frame_id = f.frame_id
ORDER BY f.capture, f.frame_id, f.inline_depth
