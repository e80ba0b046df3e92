-- sample_symbols: every delivered sample (delivered_samples) with the
-- function of its own address.
--
--   delivered_samples.*  the sample, as delivered_samples gives it
--   symbol, dso          the function perf report counts the sample's self
--                        time against ([unknown] without an address)
SELECT d.*, COALESCE(ff.symbol, '[unknown]') AS symbol, COALESCE(ff.dso, '[unknown]') AS dso
FROM delivered_samples d
LEFT JOIN frame_functions ff ON ff.capture = d.capture AND ff.frame_id = d.leaf_frame_id
