-- sample_symbols: every sample with the function of its own address.
--
--   the samples table's columns, and
--   symbol, dso  the function perf report counts the sample's self time
--                against ([unknown] without an address)
SELECT s.*, COALESCE(ff.symbol, '[unknown]') AS symbol, COALESCE(ff.dso, '[unknown]') AS dso
FROM samples s
LEFT JOIN frame_functions ff ON ff.capture = s.capture AND ff.frame_id = s.leaf_frame_id
