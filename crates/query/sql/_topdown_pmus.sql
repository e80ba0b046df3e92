-- _topdown_pmus (template): each capture's PMUs, which tell a hybrid
-- part's core types and the PMU types of their events.
--
--   {filter}  `WHERE capture = '<id>'` for one capture, or nothing
--
--   capture, type, name, caps  → pmus
SELECT capture, type, name, caps FROM pmus {filter}
