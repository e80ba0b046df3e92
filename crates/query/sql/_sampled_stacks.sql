-- _sampled_stacks: the stacks samples have, each with its frames, for
-- perfq's own computation of the stack tables (stack_tables.rs), which
-- reads each stack's frame list once.
--
--   capture, stack_id  → stacks
--   frame_ids          the stack's frames, leaf first (→ frames.frame_id)
SELECT capture, stack_id, frame_ids FROM stacks WHERE frame_ids IS NOT NULL
