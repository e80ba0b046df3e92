-- _topdown_by_leaf (template): topdown's sums per function (self) or per
-- DSO: t's rows summed per leaf frame, each frame named by frame_functions
-- ([unknown] where it has no row), then summed per key.
--
--   {capture}     the capture column of the per-frame sums: `capture`,
--                 or with one capture its id, a constant rather than a
--                 key hashed per sample
--   {by_capture}  `capture, ` where that is a column, else nothing
--   {sums}        the sums over t's rows (`COUNT(*) AS n, SUM(r_x) AS s_x`)
--   {keys}        `symbol, dso` or `dso`
--   {resums}      the sums summed again (`SUM(n) AS n, SUM(s_x) AS s_x`)
SELECT {keys}, {resums}
FROM (
  SELECT COALESCE(f.symbol, '[unknown]') AS symbol, COALESCE(f.dso, '[unknown]') AS dso, g.*
  FROM (
    SELECT {capture} AS capture, leaf_frame_id, {sums}
    FROM t
    GROUP BY {by_capture}leaf_frame_id
  ) g
  LEFT JOIN frame_functions f ON f.capture = g.capture AND f.frame_id = g.leaf_frame_id
) gk
GROUP BY {keys}
