-- _topdown_cpus (template): each capture's CPU, which the topdown
-- formulas are chosen by.
--
--   {filter}  `WHERE capture = '<id>'` for one capture, or nothing
--
--   capture, cpuid, arch  → capture
SELECT capture, cpuid, arch FROM capture {filter}
