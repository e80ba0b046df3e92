-- set_functions: the functions of each set of stack_sets.
--
--   set_id       → stack_sets.set_id
--   function_id  one function of the set (→ functions)
--   symbol, dso  its name
SELECT DISTINCT ss.set_id AS set_id, fn.function_id AS function_id, fn.symbol AS symbol,
  fn.dso AS dso
FROM stack_functions sf
JOIN stack_sets ss ON ss.capture = sf.capture AND ss.stack_id = sf.stack_id
JOIN functions fn ON fn.function_id = sf.function_id
