-- set_functions: the functions of each set of stack_sets.
--
--   set_id       → stack_sets.set_id
--   function_id  one function of the set (→ functions, which names it)
--
-- Ids only: a system-wide capture has millions of rows here, and a name
-- column (a 16-byte string view per row) was most of the memory of the
-- stack tables kept for a session.
SELECT DISTINCT ss.set_id AS set_id, fn.function_id AS function_id
FROM stack_functions sf
JOIN stack_sets ss ON ss.capture = sf.capture AND ss.stack_id = sf.stack_id
JOIN functions fn ON fn.function_id = sf.function_id
