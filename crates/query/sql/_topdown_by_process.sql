-- _topdown_by_process (template): topdown's sums per process, named by
-- the last comm of its main thread.
--
--   {capture}      the capture column of the sums, as _topdown_by_leaf's
--   {by_capture}   `capture, ` where that is a column, else nothing
--   {capture_key}  `g.capture AS capture, ` with many captures (a key),
--                  else nothing
--   {sums}         the sums over t's rows
--   {pass}         those sums passed through (`g.n AS n, ...`)
--   {comms}        _topdown_comms' query
SELECT {capture_key}g.pid AS pid, c.comm AS comm, {pass}
FROM (
  SELECT {capture} AS capture, pid, {sums}
  FROM t
  GROUP BY {by_capture}pid
) g
LEFT JOIN ({comms}) c ON c.capture = g.capture AND c.tid = g.pid
