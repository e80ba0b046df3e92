-- _topdown (template): one formula set's topdown rows for one grouping
-- (topdown/sql.rs compiles the parts from the set's formulas).
--
--   {samples}  t: the per-sample role values (topdown_samples' query)
--   {sums}     k: the sums per output key, from t (a _topdown_by_*
--              template, or _inclusive_sums for total rows)
--   {layers}   the layers of shared subexpressions from k to v
--              (`l1 AS (...), l2 AS (...), `), or nothing
--   {values}   v: each node's value and the variance of its estimate
--   {clamped}  c's columns: the values clamped to [0, 1], their standard
--              errors, and the issues
--   {flagged}  the result's columns: c's, low_samples and the flags
--   {order}    the rows' order
WITH t AS ({samples}),
k AS ({sums}),
{layers}v AS ({values}),
c AS (SELECT {clamped} FROM v)
SELECT {flagged}
FROM c
ORDER BY {order}
