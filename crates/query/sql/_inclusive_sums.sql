-- _inclusive_sums (template): per function, sums over the samples whose
-- stack holds it, each sample once however often the function recurses.
-- A sample counts once for each function of its stack, so the samples are
-- summed per set of functions (stack_sets: far fewer groups than stacks),
-- each set's sums added to each function of the set (set_functions) per
-- function id (a function's set rows are many; ids group faster than
-- names), then named (functions). function_total.sql is this template
-- filled for the delivered samples per capture and event (a test holds it
-- so); topdown's total rows fill it with their per-sample counts.
--
--   {stack_sets}  stack_sets, or one capture's rows of it
--   {samples}     the samples summed: a relation with stack_id
--   {on}          how a sample (s) joins its stack's set (ss)
--   {set_keys}    key columns taken from s (`s.capture AS capture, `),
--                 or nothing
--   {set_sums}    the sums over a set's samples (`COUNT(*) AS samples`)
--   {set_group}   s's keys to group by (`s.capture, `), or nothing
--   {keys}        key columns taken from the per-set sums g
--   {sums}        the per-set sums summed (`SUM(g.samples) AS samples`)
--   {group}       g's keys to group by
--   {named_keys}  key columns taken from the per-function sums t
--   {named_sums}  t's sums (`t.samples AS samples`)
SELECT {named_keys}fn.symbol AS symbol, fn.dso AS dso,
  {named_sums}
FROM (
  SELECT {keys}fs.function_id AS function_id,
    {sums}
  FROM (
    SELECT {set_keys}ss.set_id AS set_id,
      {set_sums}
    FROM {stack_sets} ss
    JOIN {samples} s ON {on}
    GROUP BY {set_group}ss.set_id
  ) g
  JOIN set_functions fs ON fs.set_id = g.set_id
  GROUP BY {group}fs.function_id
) t
JOIN functions fn ON fn.function_id = t.function_id
