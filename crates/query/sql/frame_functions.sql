-- frame_functions: the function of each frame, as perf report names it.
--
-- One row per distinct address (`frames` at inline depth 0):
--   capture   the capture
--   frame_id  → frames.frame_id
--   symbol    the ELF/kallsyms symbol; an unresolved frame is named by its
--             offset in its DSO, else its address (0x...), as perf does
--   dso       the DSO's short name, or [unknown]
SELECT
  capture,
  frame_id,
  COALESCE(symbol, concat('0x', lower(to_hex(COALESCE(dso_offset, address))))) AS symbol,
  COALESCE(dso, '[unknown]') AS dso
FROM frames
WHERE inline_depth = 0
