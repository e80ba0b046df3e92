-- _stack_set_samples: what function_total's join of delivered_samples with
-- stack_sets reads of each sample, for perfq's own sum of that view
-- (stack_tables/function_total.rs). A sample without a stack joins no set.
--
--   capture, event_id  → events
--   stack_id           → stacks
--   period             the sample's period (delivered_samples)
SELECT capture, event_id, stack_id, period FROM delivered_samples
WHERE stack_id IS NOT NULL
