-- _stack_functions_of_sets: stack_functions over the stack tables perfq
-- keeps (views::keep_stack_tables): each sampled stack's set's
-- functions, the rows of stack_functions.sql without its pairing of every
-- stack with every frame.
--
--   capture, stack_id  → stacks
--   function_id        → functions
SELECT ss.capture AS capture, ss.stack_id AS stack_id, sf.function_id AS function_id
FROM stack_sets ss
JOIN set_functions sf ON sf.set_id = ss.set_id
