-- _stack_sets_of_capture (template): one capture's rows of stack_sets,
-- for a join that need not match captures (a string key per row).
--
--   {capture}  the capture's id
--
--   stack_id, set_id  → stack_sets
SELECT stack_id, set_id FROM stack_sets WHERE capture = {capture}
