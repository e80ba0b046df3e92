-- _topdown_events (template): each capture's events, every column:
-- events.member is missing from datasets of older perfqs.
--
--   {filter}  `WHERE capture = '<id>'` for one capture, or nothing
SELECT * FROM events {filter}
