-- stack_sets: each sampled stack's set of functions, numbered.
--
--   capture, stack_id  → stacks
--   set_id             the same for every stack (of any capture) with the
--                      same functions: stacks that differ only in call
--                      sites, return addresses or the order of calls
--
-- A sample counts once for each function of its stack, so inclusive
-- (total) sums need only each set's sums: far fewer groups than stacks.
-- A set is its sorted list of function ids, ranked as a list: joining
-- it into a string is `array_to_string` in DataFusion and DuckDB but
-- `array_join` in Spark.
SELECT capture, stack_id, DENSE_RANK() OVER (ORDER BY functions) AS set_id
FROM (
  SELECT capture, stack_id, array_sort(array_agg(function_id)) AS functions
  FROM stack_functions
  GROUP BY capture, stack_id
) f
